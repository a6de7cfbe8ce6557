// Figures open at full resolution on click.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("div.cell_output img, figure img").forEach(function (img) {
    if (img.closest("a")) return;
    var a = document.createElement("a");
    a.href = img.getAttribute("src");
    a.className = "egm-figure-link";
    a.title = "Open the figure at full resolution";
    img.parentNode.insertBefore(a, img);
    a.appendChild(img);
  });
});
