// The code editor: CodeMirror 5 (vendored under static/vendor/codemirror/), with the mode each
// language's template names. Ctrl+Enter runs (handled by the page); Esc leaves the editor, so
// that Tab can indent without trapping keyboard users.

const FOCUSABLE = "a[href], button, input, select, textarea, summary, [tabindex]";

function focusAfter(element) {
  const all = [...document.querySelectorAll(FOCUSABLE)].filter(
    (el) => !el.disabled && el.tabIndex >= 0 && !element.contains(el) && el.offsetParent !== null,
  );
  const next = all.find((el) => element.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING);
  (next || all[0])?.focus();
}

function indent(cm) {
  if (cm.somethingSelected()) cm.indentSelection("add");
  else cm.replaceSelection(" ".repeat(cm.getOption("indentUnit")), "end", "+input");
}

// CodeMirror's contenteditable input takes what the browser put in the page (a paste, an input
// method's text, autocorrect) into its document 80 ms later; a value read sooner, by a Run or
// Submit right after a paste, would be the text before it. Read it now.
function flush(cm) {
  const input = cm.display.input;
  input.forceCompositionEnd?.();
  if (input.readDOMTimeout != null) {
    clearTimeout(input.readDOMTimeout);
    input.readDOMTimeout = null;
    input.updateFromDOM();
  }
}

export function editor(parent, { value = "", mode = null, label = "Code", lines = 14 } = {}) {
  const cm = window.CodeMirror(parent, {
    value,
    mode,
    lineNumbers: true,
    indentUnit: 4,
    matchBrackets: true,
    inputStyle: "contenteditable",
    screenReaderLabel: label,
    viewportMargin: Infinity,
    extraKeys: {
      Tab: indent,
      "Shift-Tab": (c) => c.indentSelection("subtract"),
      Esc: (c) => focusAfter(c.getWrapperElement()),
    },
  });
  const wrapper = cm.getWrapperElement();
  wrapper.classList.add(`lines-${lines}`);
  return {
    cm,
    element: wrapper,
    get value() {
      flush(cm);
      return cm.getValue();
    },
    set value(text) {
      cm.setValue(text);
    },
    set mode(mime) {
      cm.setOption("mode", mime);
    },
    focus: () => cm.focus(),
  };
}
