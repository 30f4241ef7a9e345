// sandlot's JavaScript driver: it runs a program, and writes the run's seal
// (sandlot/executor/seal.py) only when the program ran to its end.
//
// A sealed run's main.js is this file's text and one call of sandlotDriver. Its names live in
// this module's scope; the program runs as a script in the global scope (so a test case's
// expressions, evaluated there too, see its declarations), where nothing of this module can be
// reached, and a top-level `return` cannot end it early (it does not parse). Before the first
// line of the program runs, the secret and the program's text are out of the work dir: main.js
// holds only the answer (`testsAt`), the tests exist in memory alone. The seal's payload is empty
// for a program, and "1" or "0" (passed) then the actual value, inspected, for a case.
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
  run(source);
  if (!params.case) return finish("");
  const actual = run(params.case[0]);
  apply(then, resolved(actual), [(value) => finish(judge(value))]);
}
