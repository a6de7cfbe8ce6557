// The book's layout helpers (issue 20).  Everything here adapts the page to the screen it
// is read on, after MathJax has typeset it; window.egmLayoutDone resolves when it is done
// (tests/test_browser.py and scripts/build_pdf.py wait for it).
(function () {
  "use strict";
  // Figures are drawn for a 676 px column with text >= 9 pt (12.5 px); shown at no less
  // than this share of their drawn width, their smallest text stays >= 7.5 CSS px.
  var FIGURE_MIN_SHARE = 0.6;
  // A display equation wider than its box is set in a smaller font, down to this share.
  var MATH_MIN_SCALE = 0.6;
  var FIGURES = "div.cell_output img, figure img, img.sd-card-img-top";

  function article() {
    return document.querySelector("article.bd-article") || document.querySelector("main") || document.body;
  }

  // Figures: a link to the full-resolution image (tap or click), inside a box that
  // scrolls sideways, with a minimum width that keeps the figure's text legible.
  function setUpFigures() {
    document.querySelectorAll(FIGURES).forEach(function (img) {
      if (img.closest(".egm-figure-scroll")) return;
      var box = document.createElement("div");
      box.className = "egm-figure-scroll";
      var link = img.closest("a");
      var node = link || img;
      if (!link) {
        link = document.createElement("a");
        link.href = img.getAttribute("src");
        link.className = "egm-figure-link";
        link.title = "Open the figure at full resolution";
      }
      node.parentNode.insertBefore(box, node);
      if (node === img) { link.appendChild(img); }
      box.appendChild(link);
      var fix = function () {
        var drawn = parseFloat(img.style.width) || parseFloat(img.getAttribute("width")) ||
                    (img.naturalWidth ? img.naturalWidth / 2 : 0);
        if (drawn) img.style.minWidth = Math.round(drawn * FIGURE_MIN_SHARE) + "px";
      };
      if (img.complete) fix(); else img.addEventListener("load", fix);
    });
  }

  function shown(el) {
    return el.getClientRects().length > 0 && !el.closest("details:not([open]) > :not(summary)");
  }

  // Tables: fit the column as they are, else tighter, else stacked (one card per row).
  function labelCells(table) {
    if (table.dataset.egmLabelled) return;
    table.dataset.egmLabelled = "1";
    var heads = table.querySelectorAll("thead tr:last-child th");
    if (!heads.length) return;
    table.querySelectorAll("tbody tr").forEach(function (tr) {
      Array.prototype.forEach.call(tr.children, function (cell, k) {
        if (!heads[k] || !heads[k].textContent.trim()) return;
        var label = document.createElement("span");
        label.className = "egm-th";
        label.setAttribute("aria-hidden", "true");
        Array.prototype.forEach.call(heads[k].childNodes, function (n) { label.appendChild(n.cloneNode(true)); });
        cell.insertBefore(label, cell.firstChild);
      });
    });
  }

  function fitTables() {
    article().querySelectorAll("table").forEach(function (table) {
      if (table.classList.contains("indextable") || !shown(table)) return;
      table.classList.remove("egm-compact", "egm-stacked");
      var room = table.parentElement.getBoundingClientRect().width;
      if (table.scrollWidth <= room - 1) return;
      table.classList.add("egm-compact");
      if (table.scrollWidth <= room - 1) return;
      labelCells(table);
      table.classList.remove("egm-compact");
      table.classList.add("egm-stacked");
    });
  }

  // Display math: smaller where too wide; the equation number on its own line when it
  // would touch the equation.
  function overlap(a, b) {
    return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  }

  function fitMath() {
    article().querySelectorAll('mjx-container[display="true"]').forEach(function (box) {
      var svg = box.querySelector("svg");
      if (!svg || !shown(box)) return;
      var holder = box.closest("div.math") || box.parentElement;
      holder.classList.remove("egm-eqno-below");
      box.style.fontSize = "";
      box.classList.remove("egm-shrunk");
      var eqno = holder.querySelector(":scope > span.eqno");
      var width = svg.getBoundingClientRect().width;
      if (eqno && width + eqno.getBoundingClientRect().width + 8 > holder.clientWidth) {
        holder.classList.add("egm-eqno-below");
      }
      // the font size scales the equation; measure again, as MathJax's ex-based sizes
      // are not exactly proportional to it
      var scale = 1;
      for (var k = 0; k < 6; k++) {
        var room = box.clientWidth - 3;
        width = svg.getBoundingClientRect().width;
        if (width <= room || scale <= MATH_MIN_SCALE) break;
        scale = Math.max(MATH_MIN_SCALE, 0.99 * scale * room / width);
        box.style.fontSize = (100 * scale).toFixed(1) + "%";
        box.classList.add("egm-shrunk");
      }
      if (eqno && overlap(eqno.getBoundingClientRect(), svg.getBoundingClientRect())) {
        holder.classList.add("egm-eqno-below");
      }
    });
  }

  function typeset() {
    var mj = window.MathJax;
    if (!document.querySelector(".math, mjx-container")) return Promise.resolve();
    return new Promise(function (resolve) {
      var tries = 0;
      (function wait() {
        mj = window.MathJax;
        if (mj && mj.startup && mj.startup.promise) { mj.startup.promise.then(resolve, resolve); return; }
        if (++tries > 200) { resolve(); return; }
        setTimeout(wait, 50);
      })();
    });
  }

  function layout() { fitTables(); fitMath(); }

  window.egmLayoutDone = new Promise(function (resolve) {
    var start = function () {
      setUpFigures();
      typeset().then(function () {
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
    timer = setTimeout(layout, 150);
  });
  document.addEventListener("toggle", function () { layout(); }, true);
  window.egmLayout = layout;
})();
