"""Racket: a launcher (`#lang racket/base`) reads the secret, then instantiates the answer's
module, then evaluates the tests in a namespace of their own.

The answer is a module of its own (its file, with `(provide (all-defined-out))` added), compiled
only when the launcher asks for it, after the secret was read and the launcher's file removed:
its compile-time code (`begin-for-syntax`, a `#lang` reader) runs too late to find either. It is
instantiated in a namespace of its own; the tests' namespace gets `racket`, then the function
the tests are about (their `(candidate name)`) from the answer's module, where it defines it
(else the tests find racket's, or nothing): no macro, `#%app` or `lambda` of the answer's, and
nothing it evaluates in its own namespace, reaches the tests. An unclosed `#|`, a `#;` or an
`(exit 0)` stays in (or ends) the answer's module.

The tests assert with rackunit's checks (`check-within`, `check-equal?`...): each runs as the
launcher's `(check site thunk)`, with rackunit's check handler set to raise and its check-around
as it was before the answer ran (an answer that set either changes nothing), and marks its site
when it held. A check that raises (its code errs) fails the run: rackunit alone reports it as an
ERROR and goes on, and the run ended with 0.
"""

from __future__ import annotations

import re

from sandlot.judge import braces
from sandlot.judge.scripts import ANSWER, SEAL, Joined, fresh_name, lex

FILE = f"{ANSWER}.rkt"
CHECKS = ("check", "check-eq?", "check-eqv?", "check-equal?", "check-not-eq?", "check-not-eqv?",
          "check-not-equal?", "check-pred", "check-=", "check-within", "check-true", "check-false",
          "check-not-false", "check-exn", "check-not-exn", "check-match")  # fmt: skip
# The function the tests are about: `(let ((candidate name)) ...)`.
_ENTRY = re.compile(r"\(\(\s*candidate\s+([^\s()\[\]]+)\s*\)\)")
_LEXEMES = lex.lexemes(lex.DOUBLE, r";[^\n]*", r"#\|[\s\S]*?\|#", r"#\\(?:[a-z]+|.)")

_LAUNCHER = """#lang racket/base
;; sandlot's launcher (sandlot/judge/scripts/racket.py)
(require (only-in racket) (only-in rackunit current-check-handler current-check-around))
(define-values ({v} {v}-end)
  (let ([secret (if (file-exists? "{seal}")
                    (call-with-input-file "{seal}" (lambda (in) (read-bytes 200 in)))
                    #"")]
        [out (current-output-port)]
        [around (current-check-around)]
        [passed (make-hasheqv)])
    (when (file-exists? "{seal}") (delete-file "{seal}"))
    (delete-file (variable-reference->module-source (#%variable-reference)))
    (values
     (lambda (site thunk)
       (parameterize ([current-check-handler raise] [current-check-around around]) (thunk))
       (hash-set! passed site #t))
     (lambda ()
       (write-bytes (bytes-append (if (eof-object? secret) #"" secret) #"passed="
                                  (string->bytes/utf-8 (number->string (hash-count passed)))
                                  #" failed=0" (if (eof-object? secret) #"" secret) #"\\n") out)
       (flush-output out)))))
(define (fresh-namespace)
  (define ns (make-base-empty-namespace))
  (namespace-attach-module (variable-reference->namespace (#%variable-reference)) 'racket ns)
  (namespace-attach-module (variable-reference->namespace (#%variable-reference)) 'rackunit ns)
  ns)
(define answer (path->complete-path "{answer}"))
(define answer-ns (fresh-namespace))
(parameterize ([current-namespace answer-ns]) (namespace-require answer))
(define tests-ns (fresh-namespace))
(namespace-attach-module answer-ns answer tests-ns)
(parameterize ([current-namespace tests-ns])
  (namespace-require answer)
  (namespace-require 'racket)
  (define-values (exported _) (module->exports answer))
  (define provided (for*/list ([phase (in-list exported)] #:when (eqv? (car phase) 0)
                               [id (in-list (cdr phase))])
                     (car id)))
  (namespace-require `(only ,answer ,@(filter (lambda (n) (memq n provided)) '({entries}))))
  (namespace-set-variable-value! '{v} {v})
  (define in (open-input-string {tests}))
  (port-count-lines! in)
  (let loop ()
    (define form (read-syntax 'main.rkt in))
    (unless (eof-object? form)
      (eval (namespace-syntax-introduce form))
      (loop))))
({v}-end)
"""


def sites(tests: str, v: str) -> tuple[str, int | None]:
    blanked = _LEXEMES.blank(tests)
    spans = []
    names = "|".join(re.escape(c) for c in sorted(CHECKS, key=len, reverse=True))
    for m in re.finditer(rf"\((?:{names})(?=[\s)])", blanked):
        end = braces.matching(blanked, m.start())
        if end is None:
            return tests, None
        spans.append(lex.Span(m.start(), end + 1))
    out = lex.replaced(tests, spans, lambda check, k: f"({v} {k} (lambda () {check}))")
    return (tests, None) if out is None or not spans else (out, len(spans))


def join(answer: str, tests: str) -> Joined:
    v = fresh_name()
    body, count = sites(tests, v)
    entries = " ".join(dict.fromkeys(_ENTRY.findall(tests)))
    module = answer if re.search(r"^\s*#lang\s", answer, re.M) else f"#lang racket\n{answer}"
    literal = '"' + body.replace("\\", "\\\\").replace('"', '\\"') + '"'
    code = _LAUNCHER.format(v=v, seal=SEAL, answer=FILE, entries=entries, tests=literal)
    files = {FILE: f"{module}\n(provide (all-defined-out))\n".encode()}
    return Joined(code, files, count)
