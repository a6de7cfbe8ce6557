// The book's layout helpers (issue 20).  Everything here adapts the page to the screen it
// is read on, after MathJax has typeset it; window.egmLayoutDone resolves when it is done
// (tests/test_browser.py and scripts/build_pdf.py wait for it).
(function () {
  "use strict";
  // A display equation wider than its box is set in a smaller font, down to this share.
  var MATH_MIN_SCALE = 0.6;
  var FIGURES = "div.cell_output img, figure img, img.sd-card-img-top";

  function article() {
    return document.querySelector("article.bd-article") || document.querySelector("main") || document.body;
  }

  // Figures: each opens at full resolution on a click or a tap.  A figure fits the column
  // (never a sideways scroll); where the page has a phone rendition (egmbook.display, served
  // by _ext/phone_figures.py through <picture>), a phone shows that, drawn for its width.
  function setUpFigures() {
    // the PDF edition (scripts/build_pdf.py) prints the figures as they are: nothing to tap
    if (document.documentElement.classList.contains("egm-pdf")) return;
    document.querySelectorAll(FIGURES).forEach(function (img) {
      if (img.closest("a")) return;
      var link = document.createElement("a");
      link.href = img.currentSrc || img.getAttribute("src");
      link.className = "egm-figure-link";
      link.title = "Open the figure at full resolution";
      var node = img.closest("picture") || img;
      node.parentNode.insertBefore(link, node);
      link.appendChild(node);
      var update = function () { link.href = img.currentSrc || img.getAttribute("src"); };
      img.addEventListener("load", update);
    });
  }

  function shown(el) {
    return el.getClientRects().length > 0 && !el.closest("details:not([open]) > :not(summary)");
  }

  // Tables stay tables on a desktop and on paper: as they are, else set tighter.  On a
  // phone a table still too wide scrolls inside its own box (its first column stays in
  // view), unless it is prose (long text cells), which is read better as one card per row;
  // a card leaves out the cells that are empty.
  var PHONE_MAX = 600;  // CSS px: narrower viewports are phones
  var PROSE_CELL = 60;  // characters: a cell this long is prose, not a value

  function labelCells(table) {
    if (table.dataset.egmLabelled) return;
    table.dataset.egmLabelled = "1";
    var heads = table.querySelectorAll("thead tr:last-child th");
    if (!heads.length) return;
    table.querySelectorAll("tbody tr").forEach(function (tr) {
      Array.prototype.forEach.call(tr.children, function (cell, k) {
        if (!cell.textContent.trim() && !cell.querySelector("img, svg, mjx-container")) {
          cell.classList.add("egm-empty");
          return;
        }
        if (!heads[k] || !heads[k].textContent.trim()) return;
        var label = document.createElement("span");
        label.className = "egm-th";
        label.setAttribute("aria-hidden", "true");
        Array.prototype.forEach.call(heads[k].childNodes, function (n) { label.appendChild(n.cloneNode(true)); });
        cell.insertBefore(label, cell.firstChild);
      });
    });
  }

  function isProse(table) {
    return Array.prototype.some.call(table.querySelectorAll("tbody td"), function (td) {
      return td.textContent.trim().length > PROSE_CELL;
    });
  }

  function fits(table) {
    return table.scrollWidth <= table.parentElement.getBoundingClientRect().width + 1;
  }

  function printing() {
    return document.documentElement.classList.contains("egm-pdf") || window.matchMedia("print").matches;
  }

  // Each pass below reads the geometry of every element it fits before it writes a class or a
  // style to any of them, then reads again: the browser lays the page out once per step, not
  // once per table or equation (tables and equations do not change each other's room).
  function wide(table) { return !fits(table); }

  function fitTables() {
    var phone = window.innerWidth <= PHONE_MAX && !printing();
    var tables = Array.prototype.filter.call(article().querySelectorAll("table"), function (table) {
      return !table.classList.contains("indextable") && shown(table);
    });
    var pending = [];
    tables.forEach(function (table) {
      table.classList.remove("egm-compact", "egm-tight", "egm-stacked", "egm-scroll");
      var columns = table.querySelectorAll("thead tr:last-child th").length;
      if (phone && columns >= 3 && isProse(table)) {  // prose squeezed into narrow columns: cards
        labelCells(table);
        table.classList.add("egm-stacked");
      } else {
        pending.push(table);
      }
    });
    function stack(table) {
      labelCells(table);
      table.classList.remove("egm-compact", "egm-tight");
      table.classList.add("egm-stacked");
    }
    var over = pending.filter(wide);
    over.forEach(function (table) { table.classList.add("egm-compact"); });
    over = over.filter(wide);
    if (phone) {  // a table of prose becomes cards, a table of values scrolls in its own box
      over.forEach(function (table) {
        if (isProse(table)) stack(table);
        else table.classList.add("egm-scroll");
      });
      return;
    }
    over.forEach(function (table) { table.classList.add("egm-tight"); });
    over = over.filter(wide);
    // a desktop scrolls what is left in the table's box, its first column in view; paper cannot
    // scroll: there the last resort is a card per row
    over.forEach(printing() ? stack : function (table) { table.classList.add("egm-scroll"); });
  }

  // A table's caption ("Table 9.2: ...") wraps at the width of the box the reader sees, also
  // when the table is wider and scrolls in it (a caption is otherwise as wide as its table),
  // and stays in view while the table scrolls.
  function fitCaptions() {
    var items = Array.prototype.map.call(article().querySelectorAll("table > caption"), function (caption) {
      var table = caption.parentElement;
      var box = /(auto|scroll)/.test(getComputedStyle(table).overflowX) ? table : table.parentElement;
      return {caption: caption, table: table, box: box};
    });
    items.forEach(function (it) { it.caption.style.maxWidth = ""; });
    items.forEach(function (it) {
      it.room = it.box && shown(it.table) && it.table.getBoundingClientRect().width > it.box.clientWidth + 1
        ? it.box.clientWidth : null;
    });
    items.forEach(function (it) { if (it.room !== null) it.caption.style.maxWidth = it.room + "px"; });
  }

  // Display math: smaller where too wide; the equation number on its own line when it
  // would touch the equation.
  function overlap(a, b) {
    return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  }

  function fitMath() {
    var items = [];
    article().querySelectorAll('mjx-container[display="true"]').forEach(function (box) {
      // the typeset formula: MathJax's SVG (the HTML book) or CommonHTML (the PDF edition)
      var svg = box.querySelector("svg") || box.querySelector("mjx-math");
      if (!svg || !shown(box)) return;
      var holder = box.closest("div.math") || box.parentElement;
      items.push({box: box, svg: svg, holder: holder, eqno: holder.querySelector(":scope > span.eqno"),
                  scale: 1});
    });
    items.forEach(function (it) {
      it.holder.classList.remove("egm-eqno-below");
      it.box.style.fontSize = "";
      it.box.classList.remove("egm-shrunk");
    });
    items.forEach(function (it) {
      it.below = !!it.eqno && it.svg.getBoundingClientRect().width + it.eqno.getBoundingClientRect().width + 8 >
        it.holder.clientWidth;
    });
    items.forEach(function (it) { if (it.below) it.holder.classList.add("egm-eqno-below"); });
    // the font size scales the equation; measure again, as MathJax's ex-based sizes
    // are not exactly proportional to it
    var active = items;
    for (var k = 0; k < 6 && active.length; k++) {
      active.forEach(function (it) {
        it.room = it.box.clientWidth - 3;
        it.width = it.svg.getBoundingClientRect().width;
      });
      active = active.filter(function (it) { return it.width > it.room && it.scale > MATH_MIN_SCALE; });
      active.forEach(function (it) {
        it.scale = Math.max(MATH_MIN_SCALE, 0.99 * it.scale * it.room / it.width);
        it.box.style.fontSize = (100 * it.scale).toFixed(1) + "%";
        it.box.classList.add("egm-shrunk");
      });
    }
    items = items.filter(function (it) {
      return it.eqno && overlap(it.eqno.getBoundingClientRect(), it.svg.getBoundingClientRect());
    });
    items.forEach(function (it) { it.holder.classList.add("egm-eqno-below"); });
  }

  // Resolves when MathJax reports the page typeset (its startup promise), however long that
  // takes on a busy machine; at once on a page without math, and once the page has loaded
  // (every deferred script run) if MathJax did not load at all.
  function typeset() {
    if (!document.querySelector(".math, mjx-container")) return Promise.resolve();
    var started = function () {
      var mj = window.MathJax;
      return mj && mj.startup && mj.startup.promise ? mj.startup.promise : null;
    };
    return new Promise(function (resolve) {
      var promise = started();
      if (promise) { promise.then(resolve, resolve); return; }
      var onLoad = function () { var p = started(); if (p) p.then(resolve, resolve); else resolve(); };
      if (document.readyState === "complete") onLoad();
      else window.addEventListener("load", onLoad);
    });
  }

  function layout() { fitTables(); fitCaptions(); fitMath(); }

  // Until the first fit, after MathJax has typeset the page, there is nothing to fit again: a
  // <details> open in the source reports a toggle while the page loads.
  var fitted = false;

  window.egmLayoutDone = new Promise(function (resolve) {
    var start = function () {
      setUpFigures();
      typeset().then(function () {
        fitted = true;
        layout();
        resolve(true);
      });
    };
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
    else start();
  });

  // Fit again when the width changes (a phone turned, a window resized); a change of height
  // alone (a full-page screenshot, a browser bar) changes nothing.
  var timer = null, lastWidth = window.innerWidth;
  window.addEventListener("resize", function () {
    if (window.innerWidth === lastWidth) return;
    lastWidth = window.innerWidth;
    clearTimeout(timer);
    timer = setTimeout(function () { if (fitted) layout(); }, 150);
  });
  document.addEventListener("toggle", function () { if (fitted) layout(); }, true);
  window.egmLayout = layout;
})();
