// The Go packages a program in the go and go_test rows may import besides the standard library:
// the module dependencies SandboxFusion's Go runtime caches (so that a program that builds there
// builds here), with testify's other packages. `sandlot packages lock` resolves them into go.mod
// and go.sum beside this file; `sandlot setup` downloads that build list into the module cache
// the rows read (sandlot/install/gomod.py).
package main

import (
	_ "github.com/go-enry/go-enry/v2"
	_ "github.com/go-openapi/inflect"
	_ "github.com/opentracing/opentracing-go"
	_ "github.com/sirupsen/logrus"
	_ "github.com/spf13/cobra"
	_ "github.com/spf13/pflag"
	_ "github.com/spf13/viper"
	_ "github.com/stretchr/testify/assert"
	_ "github.com/stretchr/testify/mock"
	_ "github.com/stretchr/testify/require"
	_ "github.com/stretchr/testify/suite"
	_ "go.opentelemetry.io/otel"
	_ "go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	_ "go.opentelemetry.io/otel/metric"
	_ "go.opentelemetry.io/otel/sdk"
	_ "go.opentelemetry.io/otel/sdk/metric"
	_ "go.opentelemetry.io/otel/trace"
	_ "go.uber.org/atomic"
	_ "go.uber.org/automaxprocs"
	_ "go.uber.org/goleak"
	_ "go.uber.org/zap"
	_ "golang.org/x/oauth2"
	_ "golang.org/x/text"
	_ "gopkg.in/yaml.v2"
	_ "gopkg.in/yaml.v3"
	_ "gorm.io/gorm"
)

func main() {}
