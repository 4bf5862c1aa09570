// Math in replies (SPEC §11): the server leaves TeX whole in <span class="math"> (its escaped
// source, so it reads as TeX without this script); KaTeX, vendored in static/katex and loaded
// the first time a reply holds math (never from a CDN), typesets it in place. katex.render builds
// DOM nodes (its sizes set through element.style, which the strict CSP allows); its MathML copy
// is what screen readers read. Untrusted TeX: KaTeX's `trust` stays off (no \href, \url,
// \includegraphics) and sizes and macro expansion are bounded.

let loading = null;

function loadKatex() {
  if (window.katex) return Promise.resolve(window.katex);
  if (!loading) {
    loading = new Promise((resolve, reject) => {
      const css = document.createElement("link");
      css.rel = "stylesheet";
      css.href = "/static/katex/katex.min.css";
      document.head.append(css);
      const script = document.createElement("script");
      script.src = "/static/katex/katex.min.js";
      script.onload = () => resolve(window.katex);
      script.onerror = () => {
        loading = null;
        reject(new Error("could not load KaTeX"));
      };
      document.head.append(script);
    });
  }
  return loading;
}

// throwOnError: KaTeX's own error rendering sets a style attribute, which the CSP refuses; a
// formula it cannot parse is shown as its TeX source instead, marked, with the reason as a title.
const OPTIONS = { throwOnError: true, trust: false, maxSize: 20, maxExpand: 500, output: "htmlAndMathml" };

// Typeset every math span under `root` not typeset yet (a failed load leaves the TeX source).
export function renderMath(root) {
  if (!root) return;
  const spans = [...root.querySelectorAll("span.math:not([data-typeset])")];
  if (!spans.length) return;
  loadKatex()
    .then((katex) => {
      for (const span of spans) {
        const tex = span.textContent;
        try {
          katex.render(tex, span, { ...OPTIONS, displayMode: span.classList.contains("display") });
          span.dataset.typeset = "1";
        } catch (err) {
          span.textContent = tex;
          span.classList.add("math-error");
          span.title = `Not typeset: ${err && err.message ? err.message : err}`;
          span.dataset.typeset = "0";
        }
      }
    })
    .catch(() => {});
}
