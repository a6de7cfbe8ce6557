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

  function fitTables() {
    var phone = window.innerWidth <= PHONE_MAX && !printing();
    article().querySelectorAll("table").forEach(function (table) {
      if (table.classList.contains("indextable") || !shown(table)) return;
      table.classList.remove("egm-compact", "egm-tight", "egm-stacked", "egm-scroll");
      var columns = table.querySelectorAll("thead tr:last-child th").length;
      if (phone && columns >= 3 && isProse(table)) {  // prose squeezed into narrow columns: cards
        labelCells(table);
        table.classList.add("egm-stacked");
        return;
      }
      if (fits(table)) return;
      table.classList.add("egm-compact");
      if (fits(table)) return;
      if (phone) {
        if (isProse(table)) {
          labelCells(table);
          table.classList.remove("egm-compact");
          table.classList.add("egm-stacked");
        } else {
          table.classList.add("egm-scroll");
        }
        return;
      }
      table.classList.add("egm-tight");
      if (fits(table)) return;
      if (!printing()) {  // a desktop scrolls what is left in the table's box, its first column in view
        table.classList.add("egm-scroll");
        return;
      }
      labelCells(table);  // paper cannot scroll: the last resort is a card per row
      table.classList.remove("egm-compact", "egm-tight");
      table.classList.add("egm-stacked");
    });
  }

  // A table's caption ("Table 9.2: ...") wraps at the width of the box the reader sees, also
  // when the table is wider and scrolls in it (a caption is otherwise as wide as its table),
  // and stays in view while the table scrolls.
  function fitCaptions() {
    article().querySelectorAll("table > caption").forEach(function (caption) {
      var table = caption.parentElement;
      var box = /(auto|scroll)/.test(getComputedStyle(table).overflowX) ? table : table.parentElement;
      caption.style.maxWidth = "";
      if (!shown(table) || !box) return;
      if (table.getBoundingClientRect().width > box.clientWidth + 1) {
        caption.style.maxWidth = box.clientWidth + "px";
      }
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

  function layout() { fitTables(); fitCaptions(); fitMath(); }

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
