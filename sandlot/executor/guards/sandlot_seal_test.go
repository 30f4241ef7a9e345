// sandlot's go test guard (sandlot/executor/guards/frameworks.py): a TestMain that writes the
// run's seal when every test passed (with -test.paniconexit0, an os.Exit(0) in a test fails it).
// The secret is read by the package's first variable initializer, before any of the code's own,
// and only TestMain, called by the generated main, may write it. It runs in the box.

package PACKAGE

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

var sandlotSeal = func() func(int) {
	text, _ := os.ReadFile(".sandlot_seal")
	os.Remove(".sandlot_seal")
	spent := false
	return func(code int) {
		caller := func(skip int) (string, string) {
			pc, file, _, _ := runtime.Caller(skip)
			return runtime.FuncForPC(pc).Name(), file
		}
		testMain, _ := caller(2)
		main, file := caller(3)
		ok := !spent && code == 0 && len(text) > 0 && strings.HasSuffix(testMain, ".TestMain") &&
			main == "main.main" && (file == "_testmain.go" || strings.HasSuffix(file, "/_testmain.go"))
		spent = true
		if ok {
			os.Stdout.Write([]byte(string(text) + string(text) + "\n"))
		}
	}
}()

func TestMain(m *testing.M) {
	code := m.Run()
	sandlotSeal(code)
	os.Exit(code)
}
