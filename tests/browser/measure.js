// Injected by tests/browser/test_browser.cpp at the end of a copy of a page: measures what the
// browser drew and writes it into the DOM (the test reads it from chromium --dump-dom). It logs
// nothing, so that any console message is the page's own.
(function () {
  const items = [];
  for (const e of document.querySelectorAll("[data-key]")) {
    const r = e.getBoundingClientRect();
    const data = {};
    for (const a of e.attributes) if (a.name.startsWith("data-")) data[a.name.slice(5)] = a.value;
    items.push({ tag: e.tagName.toLowerCase(), x: r.x, y: r.y, w: r.width, h: r.height, text: e.textContent.slice(0, 300), data: data });
  }
  const svgs = [];
  for (const s of document.querySelectorAll("svg")) {
    const r = s.getBoundingClientRect();
    svgs.push({ id: s.id, w: r.width, h: r.height });
  }
  const out = document.createElement("pre");
  out.id = "sextant-measured";
  out.textContent = JSON.stringify({ title: document.title, items: items, svgs: svgs });
  document.body.appendChild(out);
})();
