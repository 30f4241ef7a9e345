// sandlot's Catch2 guard (sandlot/executor/guards/frameworks.py): a listener that writes the
// run's seal, with the counts, when the run ends with every test case passed. The secret is read
// by a pre-init function, which runs before any static initializer (this unit is linked first),
// and lives in this unit alone. It runs in the box, never in the server.
// Listeners are Catch's "external interfaces"; the row's precompiled header has none of them,
// and gives itself to every unit naming the header as it is written here, so this one writes it
// with two slashes (the same file).
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2//catch.hpp>

#include <cstdio>

namespace {

char sandlot_text[80];

void sandlot_read() {
    if (std::FILE* f = std::fopen(".sandlot_seal", "rb")) {
        sandlot_text[std::fread(sandlot_text, 1, sizeof sandlot_text - 1, f)] = 0;
        std::fclose(f);
    }
    std::remove(".sandlot_seal");
}

__attribute__((section(".preinit_array"), used)) void (*sandlot_reader)() = sandlot_read;

struct SandlotSeal : Catch::TestEventListenerBase {
    using TestEventListenerBase::TestEventListenerBase;

    void testRunEnded(Catch::TestRunStats const& stats) override {
        Catch::Counts const& cases = stats.totals.testCases;
        if (stats.aborting || cases.failed > 0 || cases.failedButOk > 0 || !sandlot_text[0]) {
            return;
        }
        std::fflush(stdout);
        std::printf("%spassed=%llu failed=0 skipped=0%s\n", sandlot_text,
                    static_cast<unsigned long long>(cases.passed), sandlot_text);
        std::fflush(stdout);
        sandlot_text[0] = 0;  // once
    }
};

}  // namespace

CATCH_REGISTER_LISTENER(SandlotSeal)
