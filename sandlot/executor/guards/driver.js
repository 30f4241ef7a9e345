// sandlot's JavaScript driver: it runs a program, and writes the run's seal
// (sandlot/executor/seal.py) only when the program ran to its end.
//
// A sealed run's main.js is this file's text and one call of sandlotDriver. Its names live in
// this module's scope; the program runs as a script in the global scope (so a test case's
// expressions, evaluated there too, see its declarations), where nothing of this module can be
// reached, and a top-level `return` cannot end it early (it does not parse). Before the first
// line of the program runs, the secret and the program's text are out of the work dir: main.js
// holds only the answer (`testsAt`), the tests exist in memory alone.
//
// A program whose tests begin at `testsAt` is split (sandlot/judge/scripts/js.py): the answer
// runs as a script of its own, then the tests as the body of a function made before the answer
// ran, whose locals are its declarations and whose `require`, `console` and `__sandlot` are the
// driver's: `require` gives frozen copies of assert (and lodash) taken before the answer ran,
// `console.assert` throws, and `__sandlot` counts the assertion sites that held. The seal's
// payload is then `passed=N failed=0`; for a program it is empty, and for a case "1" or "0"
// (passed) then the actual value, inspected.
"use strict";

function sandlotDriver(params) {
  const fs = require("fs");
  const path = require("path");
  const util = require("util");
  const vm = require("vm");
  const Module = require("module");
  // What is used once the program has started is taken here first: the program may patch
  // globals, modules and prototypes, not what this scope holds. So nothing below reads a
  // method or a property the program could have put on a prototype: lists and records are
  // built with defineProperty (an assignment or push would call a setter of the program's),
  // walked by index (for-of asks the iterator), and option bags have no prototype.
  const { writeSync, readFileSync, unlinkSync, writeFileSync } = fs;
  const { isDeepStrictEqual, inspect } = util;
  const { isProxy } = util.types;
  const runInThisContext = vm.runInThisContext;
  const run = (code) => runInThisContext(code, { __proto__: null, filename: file });
  const { getPrototypeOf, getOwnPropertyDescriptor, defineProperty, hasOwn, keys } = Object;
  const { isArray } = Array;
  const resolved = Promise.resolve.bind(Promise);
  const then = Promise.prototype.then;
  const apply = Reflect.apply;
  const toText = String;
  const trim = String.prototype.trim;
  const objectProto = Object.prototype;
  const arrayProto = Array.prototype;
  const { max, abs } = Math;
  const bytes = Buffer.from.bind(Buffer);
  const { freeze, create } = Object;
  const { ownKeys } = Reflect;
  const ErrorType = Error;

  const take = (name, encoding) => {
    const data = readFileSync(name, encoding);
    unlinkSync(name);
    return data;
  };
  const seal = take(params.seal, "latin1");
  const source = take(params.program, "utf8");
  const file = __filename;
  const put = (into, key, value) => defineProperty(into, key, {
    __proto__: null, value, writable: true, enumerable: true, configurable: true,
  });
  writeFileSync(file, source.slice(0, params.testsAt));

  // Plain data of the program's value: no getter, proxy, prototype or method of its making is
  // consulted when it is compared.
  const plain = (value, depth = 0) => {
    if (value === null || (typeof value !== "object" && typeof value !== "function")) {
      if (typeof value === "symbol") throw new TypeError("strict comparison: a symbol");
      return value;
    }
    if (typeof value === "function" || isProxy(value)) {
      throw new TypeError("strict comparison: not plain data");
    }
    if (depth > 500) throw new TypeError("strict comparison: data nested more than 500 deep");
    const proto = getPrototypeOf(value);
    const own = (key) => {
      const d = getOwnPropertyDescriptor(value, key);
      if (!d || !hasOwn(d, "value")) throw new TypeError(`strict comparison: ${key} is an accessor`);
      return plain(d.value, depth + 1);
    };
    if (isArray(value) && proto === arrayProto) {
      const out = [];
      const length = getOwnPropertyDescriptor(value, "length").value;
      for (let i = 0; i < length; i++) put(out, i, own(toText(i)));
      return out;
    }
    if (proto === objectProto || proto === null) {
      const out = {};
      const names = keys(value);
      for (let i = 0; i < names.length; i++) put(out, names[i], own(names[i]));
      return out;
    }
    throw new TypeError("strict comparison: an object of a class is not plain data");
  };

  // Plain data compared by this scope alone, as isDeepStrictEqual would: Node's own walks an
  // object's keys with for-of, which an iterator the program put on Array.prototype empties.
  const same = (x, y) => {
    if (x === y) return x !== 0 || 1 / x === 1 / y;
    if (x !== x) return y !== y;
    if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) return false;
    if (isArray(x) !== isArray(y) || getPrototypeOf(x) !== getPrototypeOf(y)) return false;
    const names = keys(x);
    if (names.length !== keys(y).length) return false;
    for (let i = 0; i < names.length; i++) {
      if (!hasOwn(y, names[i]) || !same(x[names[i]], y[names[i]])) return false;
    }
    return true;
  };

  // A test case's expected value, evaluated before the program runs: no declaration of its
  // can stand for a name in it.
  const expectedOf = (text) => {
    try {
      return run("(" + text + ")");
    } catch (e) {
      return undefined;
    }
  };
  const wanted = params.case ? expectedOf(params.case[1]) : undefined;

  const judge = (actual) => {
    const text = params.case[1];
    let expected = wanted;
    if (params.strict) {
      actual = plain(actual);
      expected = plain(expected);
    }
    let passed;
    if (expected === undefined && apply(trim, text, []) !== "undefined") {
      // (under strict, no object: its text would come from a toString the program can set)
      const scalar = typeof actual !== "object" || actual === null;
      passed = (scalar || !params.strict) && toText(actual) === text;
    } else if (typeof actual === "number" && typeof expected === "number") {
      passed = actual === expected || abs(actual - expected) <= 1e-9 * max(1, abs(expected));
    } else {
      passed = params.strict ? same(actual, expected) : isDeepStrictEqual(actual, expected);
    }
    return (passed ? "1" : "0") + inspect(actual, { depth: 6 });
  };

  const finish = (payload) => {
    writeSync(1, bytes(seal + payload + seal + "\n", "utf8"));
  };

  // The tests' scope, made before the answer runs: what they require, log and assert with, and
  // the marks of their assertion sites.
  const harness = (text) => {
    const copy = (mod) => {
      const out = typeof mod === "function" ? function (...args) { return apply(mod, this, args); } : {};
      for (const key of ownKeys(mod)) {
        try {
          out[key] = mod[key];
        } catch (e) {
          // a function's own name, length or prototype: the copy keeps its own
        }
      }
      return freeze(out);
    };
    const modules = create(null);
    for (const id of ["assert", "node:assert", "assert/strict", "node:assert/strict"]) {
      // only those the tests name (a module loaded for nothing costs each run its start-up)
      if (text.includes(`'${id}'`) || text.includes(`"${id}"`)) modules[id] = copy(local(id));
    }
    if (text.includes("lodash")) modules.lodash = copy(local("lodash"));
    const testsRequire = (id) => (id in modules ? modules[id] : local(id));
    const testsConsole = create(null);
    for (const key of keys(console)) testsConsole[key] = console[key];
    testsConsole.assert = (ok, ...message) => {
      if (!ok) {
        const said = message.length ? ": " + message.join(" ") : "";
        // named as assert's own, without loading that module in every run (its start-up cost)
        const failure = new ErrorType("Assertion failed" + said);
        failure.name = "AssertionError";
        throw failure;
      }
    };
    freeze(testsConsole);
    const marks = create(null);
    let passed = 0;
    const mark = (site) => {
      if (!(site in marks)) {
        marks[site] = true;
        passed += 1;
      }
    };
    const sandlot = freeze({
      after: (site) => mark(site),
      fails: (site, failed) => {
        if (!failed) mark(site);
        return failed;
      },
    });
    const body = run(
      "(function (__sandlot, require, console) { return function () {\n" + text + "\n}; })",
    );
    const tests = body(sandlot, testsRequire, freeze(testsConsole));
    return { run: () => apply(tests, undefined, []), passed: () => passed };
  };

  // An error of the program's, as it reports it: its stack without the driver's frames.
  const ownFrames = (e) => {
    try {
      const stack = e instanceof ErrorType ? e.stack : undefined;
      const cut = typeof stack === "string" ? stack.search(/\n\s+at (?:Object\.run|sandlotDriver) /) : -1;
      if (cut > 0) e.stack = stack.slice(0, cut);
    } catch (ignored) {
      // a stack the program made unwritable: reported as it is
    }
    return e;
  };

  // CommonJS's names, as the program expects them, as globals.
  const main = new Module(file, null);
  main.filename = file;
  main.paths = Module._nodeModulePaths(path.dirname(file));
  process.mainModule = main;
  const local = Module.createRequire(file);
  local.main = main;
  Object.assign(globalThis, {
    require: local, module: main, exports: main.exports,
    __filename: file, __dirname: path.dirname(file),
  });
  const testsAt = params.case ? source.length : params.testsAt;
  if (testsAt <= 0 || testsAt >= source.length) {
    run(source);
  } else {
    const tests = harness(source.slice(testsAt));
    try {
      run(source.slice(0, testsAt));
      tests.run();
    } catch (e) {
      throw ownFrames(e);
    }
    return finish(`passed=${tests.passed()} failed=0`);
  }
  if (!params.case) return finish("");
  const actual = run(params.case[0]);
  apply(then, resolved(actual), [(value) => finish(judge(value))]);
}
