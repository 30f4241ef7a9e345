// sandlot's D guard (sandlot/executor/guards/frameworks.py): a unit tester that runs every
// module's unittests and writes the run's seal, with the counts, when all of them passed. The
// secret is read by a C constructor of this module (linked first: it runs before any of the
// code's constructors, C's or D's). It runs in the box, never in the server.
module sandlot_seal;

import core.runtime : Runtime, UnitTestResult;
import core.stdc.stdio : FILE, fclose, fflush, fopen, fprintf, fread, fwrite, remove, stderr, stdout;

private __gshared char[80] text;
private __gshared size_t length;

pragma(crt_constructor) extern (C) void sandlot_seal_read()
{
    FILE* f = fopen(".sandlot_seal", "rb");
    if (f !is null)
    {
        length = fread(text.ptr, 1, text.length, f);
        fclose(f);
    }
    remove(".sandlot_seal");
}

shared static this()
{
    Runtime.extendedModuleUnitTester = &runAll;
}

private UnitTestResult runAll()
{
    size_t executed, passed;
    foreach (m; ModuleInfo)
    {
        if (m is null)
            continue;
        if (auto test = m.unitTest)
        {
            ++executed;
            try
            {
                test();
                ++passed;
            }
            catch (Throwable e)
            {
                auto message = e.toString();
                fprintf(stderr, "%.*s\n", cast(int) message.length, message.ptr);
            }
        }
    }
    if (passed == executed && length > 0)
    {
        import core.stdc.stdio : printf;

        fflush(stdout);
        printf("%.*s", cast(int) length, text.ptr);
        printf("passed=%d failed=0 skipped=0", cast(int) passed);
        printf("%.*s\n", cast(int) length, text.ptr);
        fflush(stdout);
    }
    length = 0; // once
    UnitTestResult result = {executed: executed, passed: passed, runMain: executed == 0,
        summarize: executed > 0};
    return result;
}
