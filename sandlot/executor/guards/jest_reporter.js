// sandlot's jest guard (sandlot/executor/guards/frameworks.py): a reporter that writes the run's
// seal, with jest's counts, when the run ends with every test passed. Jest loads it before any
// test file; it reads the secret and removes it, and itself, at once. It runs in the box.
"use strict";
const fs = require("fs");

const seal = fs.readFileSync(".sandlot_seal", "latin1");
fs.unlinkSync(".sandlot_seal");
fs.unlinkSync(__filename);
const { writeSync } = fs;
let first = null; // the reporter jest made; another instance never writes
let started = null; // the results object of jest's own run

class SandlotSeal {
  constructor() {
    if (first === null) first = this;
  }

  onRunStart(results) {
    if (this === first && started === null) started = results;
  }

  onRunComplete(contexts, results) {
    if (this !== first || results !== started) return;
    started = undefined; // once
    const ok = results.numFailedTests === 0 && results.numFailedTestSuites === 0 &&
      results.numRuntimeErrorTestSuites === 0 && !results.wasInterrupted &&
      results.numTotalTests > 0;
    if (!ok) return;
    const skipped = results.numPendingTests + results.numTodoTests;
    const counts = `passed=${results.numPassedTests} failed=0 skipped=${skipped}`;
    writeSync(1, `${seal}${counts}${seal}\n`);
  }
}

module.exports = SandlotSeal;
