// Pan, zoom and hover cards for a picture of `taskgraph viz`. Plain
// JavaScript, no library: the page must work offline, as one file.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("cards").textContent);
  var view = document.getElementById("view");
  var svg = view.querySelector("svg");
  var card = document.getElementById("card");
  var nodes = data.nodes;
  var LIST = 12;

  // Graphviz's titles would pop up as the browser's own tooltips, over the card.
  Array.prototype.slice.call(svg.querySelectorAll("title")).forEach(function (t) {
    t.parentNode.removeChild(t);
  });

  // ---- pan and zoom, by moving the SVG's viewBox ----
  var base = svg.viewBox.baseVal;
  var home = { x: base.x, y: base.y, w: base.width, h: base.height };
  var box = { x: home.x, y: home.y, w: home.w, h: home.h };
  function apply() {
    svg.setAttribute("viewBox", [box.x, box.y, box.w, box.h].join(" "));
  }
  function scale() {
    var m = svg.getScreenCTM();
    return m && m.a ? m : null;
  }
  function zoomAt(clientX, clientY, factor) {
    var m = scale();
    if (!m) { return; }
    var w = Math.min(Math.max(box.w * factor, home.w / 400), home.w * 8);
    factor = w / box.w;
    var px = (clientX - m.e) / m.a;
    var py = (clientY - m.f) / m.d;
    box.x = px - (px - box.x) * factor;
    box.y = py - (py - box.y) * factor;
    box.w *= factor;
    box.h *= factor;
    apply();
  }
  function zoomCentre(factor) {
    var r = view.getBoundingClientRect();
    zoomAt(r.left + r.width / 2, r.top + r.height / 2, factor);
  }
  function fit() {
    box = { x: home.x, y: home.y, w: home.w, h: home.h };
    apply();
  }
  view.addEventListener("wheel", function (e) {
    e.preventDefault();
    var step = e.deltaMode === 1 ? 0.05 : e.deltaMode === 2 ? 1 : 0.0015;
    zoomAt(e.clientX, e.clientY, Math.exp(e.deltaY * step));
  }, { passive: false });
  var drag = null;
  view.addEventListener("pointerdown", function (e) {
    if (e.button !== 0) { return; }
    var m = scale();
    if (!m) { return; }
    drag = { x: e.clientX, y: e.clientY, bx: box.x, by: box.y, a: m.a, d: m.d, id: e.pointerId };
    view.classList.add("dragging");
  });
  view.addEventListener("pointermove", function (e) {
    if (!drag || e.pointerId !== drag.id) { return; }
    if (!view.hasPointerCapture(e.pointerId)) { view.setPointerCapture(e.pointerId); }
    box.x = drag.bx - (e.clientX - drag.x) / drag.a;
    box.y = drag.by - (e.clientY - drag.y) / drag.d;
    apply();
  });
  function endDrag(e) {
    if (!drag || e.pointerId !== drag.id) { return; }
    if (view.hasPointerCapture(e.pointerId)) { view.releasePointerCapture(e.pointerId); }
    drag = null;
    view.classList.remove("dragging");
  }
  view.addEventListener("pointerup", endDrag);
  view.addEventListener("pointercancel", endDrag);
  document.getElementById("zoom-in").addEventListener("click", function () { zoomCentre(1 / 1.25); });
  document.getElementById("zoom-out").addEventListener("click", function () { zoomCentre(1.25); });
  document.getElementById("fit").addEventListener("click", fit);
  document.addEventListener("keydown", function (e) {
    if (e.key === "+" || e.key === "=") { zoomCentre(1 / 1.25); }
    else if (e.key === "-" || e.key === "_") { zoomCentre(1.25); }
    else if (e.key === "0") { fit(); }
  });

  // ---- hover cards ----
  function num(x) {
    return typeof x === "number" ? x.toLocaleString("en-US", { maximumFractionDigits: 1 }) : String(x);
  }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined) { e.textContent = text; }
    if (cls) { e.className = cls; }
    return e;
  }
  function row(table, name, value, cls) {
    var tr = el("tr", undefined, cls);
    tr.appendChild(el("td", name));
    tr.appendChild(el("td", value));
    table.appendChild(tr);
  }
  function list(title, items) {
    var div = el("div", undefined, "list");
    div.appendChild(el("b", title + " (" + num(items.length) + ")"));
    if (items.length) {
      var ul = el("ul");
      items.slice(0, LIST).forEach(function (text) { ul.appendChild(el("li", text)); });
      if (items.length > LIST) { ul.appendChild(el("li", "… and " + num(items.length - LIST) + " more", "more")); }
      div.appendChild(ul);
    }
    return div;
  }
  function fillTask(i) {
    var t = nodes[i], f = t.figures, c = data.colour;
    function bold(colour) { return c === colour ? "figure" : undefined; }
    card.appendChild(el("h2", t.key));
    var table = el("table");
    row(table, "order position", "#" + num(f.order) + " of " + num(nodes.length), bold("order"));
    row(table, "age", num(f.age) + (f.age === 1 ? " step" : " steps"), bold("ages"));
    row(table, "inputs freed", num(f.freed), bold("freed"));
    row(table, "held when run", num(f.held_when_run), bold("memorypressure"));
    row(table, "held when released", num(f.held_when_released));
    if (c === "memoryincreases") { row(table, "memory increase", num(f.increase), "figure"); }
    if (c === "memorydecreases") { row(table, "memory decrease", num(f.decrease), "figure"); }
    if (f.worker !== undefined) { row(table, "worker", num(f.worker), bold("worker")); }
    card.appendChild(table);
    card.appendChild(list("dependencies", t.deps.map(function (d) { return nodes[d].key; })));
    card.appendChild(list("dependents", t.dependents.map(function (d) { return nodes[d].key; })));
    return { deps: t.deps, dependents: t.dependents };
  }
  function fillGroup(i) {
    var g = nodes[i];
    card.appendChild(el("h2", g.label));
    var table = el("table");
    row(table, "key name", g.key);
    row(table, "tasks", num(g.tasks));
    row(table, "order positions", "#" + num(g.order_min) + " – #" + num(g.order_max) +
        ", mean " + num(g.order_mean), data.colour === "order" ? "figure" : undefined);
    if (g.figure_mean !== null && data.colour !== "order") {
      row(table, data.colour, "mean " + num(g.figure_mean) + ", max " + num(g.figure_max), "figure");
    }
    if (g.workers.length) {
      row(table, "workers", g.workers.slice(0, 6).map(function (w) {
        return num(w[0]) + " (" + num(w[1]) + ")";
      }).join(", ") + (g.workers.length > 6 ? ", …" : ""), data.colour === "worker" ? "figure" : undefined);
    }
    row(table, "edges inside", num(g.internal_edges));
    card.appendChild(table);
    function named(pairs) {
      return pairs.map(function (p) { return nodes[p[0]].label + " (" + num(p[1]) + " edges)"; });
    }
    card.appendChild(list("dependency groups", named(g.deps)));
    card.appendChild(list("dependent groups", named(g.dependents)));
    return {
      deps: g.deps.map(function (p) { return p[0]; }),
      dependents: g.dependents.map(function (p) { return p[0]; })
    };
  }
  var marked = [];
  function mark(selector, cls) {
    Array.prototype.slice.call(svg.querySelectorAll(selector)).forEach(function (e) {
      e.classList.add(cls);
      marked.push([e, cls]);
    });
  }
  function unmark() {
    marked.forEach(function (m) { m[0].classList.remove(m[1]); });
    marked = [];
  }
  var shown = -1;
  function place(e) {
    var pad = 14, w = card.offsetWidth, h = card.offsetHeight;
    var x = e.clientX + pad, y = e.clientY + pad;
    if (x + w > window.innerWidth - 4) { x = Math.max(4, e.clientX - pad - w); }
    if (y + h > window.innerHeight - 4) { y = Math.max(4, e.clientY - pad - h); }
    card.style.left = x + "px";
    card.style.top = y + "px";
  }
  function show(i, e) {
    if (shown === i) { place(e); return; }
    hide();
    shown = i;
    var links = data.kind === "groups" ? fillGroup(i) : fillTask(i);
    mark("#v" + i, "hover");
    links.deps.forEach(function (d) { mark("#v" + d, "dep"); });
    links.dependents.forEach(function (d) { mark("#v" + d, "out"); });
    mark("g.edge.t" + i, "in");
    mark("g.edge.f" + i, "away");
    card.hidden = false;
    place(e);
  }
  function hide() {
    shown = -1;
    unmark();
    card.hidden = true;
    while (card.firstChild) { card.removeChild(card.firstChild); }
  }
  function nodeOf(target) {
    var g = target && target.closest ? target.closest("g.node") : null;
    if (!g || !/^v\d+$/.test(g.id)) { return -1; }
    var i = Number(g.id.slice(1));
    return i < nodes.length ? i : -1;
  }
  view.addEventListener("mouseover", function (e) {
    var i = nodeOf(e.target);
    if (i >= 0 && !drag) { show(i, e); }
  });
  view.addEventListener("mousemove", function (e) {
    if (shown >= 0) { place(e); }
  });
  view.addEventListener("mouseout", function (e) {
    if (shown >= 0 && nodeOf(e.relatedTarget) !== shown) { hide(); }
  });
  apply();
}());
