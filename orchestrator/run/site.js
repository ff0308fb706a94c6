/* site.js -- the client side of `gpuorch site` (run/site.c writes the pages
 * and the data files this reads). No library, no build step: it runs from
 * file:// and any web server. Data comes as scripts (data/*.js calling
 * gpuorchData), since a page opened from file:// may not fetch() a file.
 * Pages: index (runs, filtered and paged), history (a zoomable chart of one
 * figure across commits), compare (two runs' figures side by side), run
 * (the report, rendered by the C code: nothing to do here). */
"use strict";

var GPUORCH = { data: {}, runs: {} };

function gpuorchData(d) { GPUORCH.data[d.kind] = d; }
function gpuorchRun(d) { GPUORCH.runs[d.key] = d; }

function el(tag, attrs, text) {
	var e = document.createElement(tag), k;
	for (k in attrs || {}) e.setAttribute(k, attrs[k]);
	if (text !== undefined && text !== null) e.textContent = String(text);
	return e;
}

var SVGNS = "http://www.w3.org/2000/svg";
function sv(tag, attrs) {
	var e = document.createElementNS(SVGNS, tag), k;
	for (k in attrs || {}) e.setAttribute(k, attrs[k]);
	return e;
}

function root() { return document.body.getAttribute("data-root") || ""; }
function runHref(key) { return root() + "run/" + key + "/index.html"; }

/* ---- index: every run, filtered by experiment, GPU and status, paged ---- */

var PAGE = 100;

function indexPage() {
	var d = GPUORCH.data.runs, cols = {}, i;
	if (!d) return;
	d.columns.forEach(function (c, j) { cols[c] = j; });
	var rows = d.rows, state = { page: 0, picked: [] };
	var filters = document.getElementById("filters");
	var sel = {};
	["experiment", "gpu", "status"].forEach(function (name) {
		var values = {}, s = el("select", { id: "filter-" + name });
		rows.forEach(function (r) { values[r[cols[name]] || "-"] = 1; });
		s.appendChild(el("option", { value: "" }, "every " + name));
		Object.keys(values).sort().forEach(function (v) { s.appendChild(el("option", { value: v }, v)); });
		s.addEventListener("change", function () { state.page = 0; draw(); });
		var l = el("label", {}, name + " ");
		l.appendChild(s);
		filters.appendChild(l);
		sel[name] = s;
	});
	var cmp = el("button", { id: "compare", disabled: "disabled" }, "compare the two picked runs");
	cmp.addEventListener("click", function () {
		location.href = root() + "compare.html?a=" + encodeURIComponent(state.picked[0]) +
			"&b=" + encodeURIComponent(state.picked[1]);
	});
	filters.appendChild(cmp);
	var body = document.querySelector("#runs tbody"), pager = document.getElementById("pager");
	var count = document.getElementById("count");

	function matching() {
		return rows.filter(function (r) {
			return ["experiment", "gpu", "status"].every(function (n) {
				var v = sel[n].value;
				return !v || (r[cols[n]] || "-") === v;
			});
		});
	}
	function pick(key, on) {
		state.picked = state.picked.filter(function (k) { return k !== key; });
		if (on) state.picked.push(key);
		while (state.picked.length > 2) state.picked.shift();
		cmp.disabled = state.picked.length !== 2;
		Array.prototype.forEach.call(body.querySelectorAll("input"), function (c) {
			c.checked = state.picked.indexOf(c.value) >= 0;
		});
	}
	function draw() {
		var m = matching(), pages = Math.max(1, Math.ceil(m.length / PAGE));
		if (state.page >= pages) state.page = pages - 1;
		body.textContent = "";
		m.slice(state.page * PAGE, (state.page + 1) * PAGE).forEach(function (r) {
			var tr = el("tr", { "class": "run", "data-status": r[cols.status] });
			var key = r[cols.key], box = el("input", { type: "checkbox", value: key });
			box.checked = state.picked.indexOf(key) >= 0;
			box.addEventListener("change", function () { pick(key, box.checked); });
			var td = el("td");
			td.appendChild(box);
			tr.appendChild(td);
			td = el("td");
			td.appendChild(el("a", { href: runHref(key) }, r[cols.run_id]));
			tr.appendChild(td);
			td = el("td");
			td.appendChild(el("a", { href: root() + "history/" + r[cols.slug] + ".html" },
					  r[cols.experiment]));
			tr.appendChild(td);
			["date", "commit", "gpu", "status", "headline"].forEach(function (n) {
				tr.appendChild(el("td", { "class": n }, r[cols[n]] || "-"));
			});
			body.appendChild(tr);
		});
		count.textContent = m.length + " of " + rows.length + " runs";
		pager.textContent = "";
		if (pages > 1) {
			var prev = el("button", { id: "prev" }, "newer"), next = el("button", { id: "next" }, "older");
			prev.disabled = state.page === 0;
			next.disabled = state.page === pages - 1;
			prev.addEventListener("click", function () { state.page--; draw(); });
			next.addEventListener("click", function () { state.page++; draw(); });
			pager.appendChild(prev);
			pager.appendChild(el("span", {}, " page " + (state.page + 1) + " of " + pages + " "));
			pager.appendChild(next);
		}
	}
	draw();
}

/* ---- history: the figure across commits, one series per GPU model ---- */

var COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"];

function niceTicks(lo, hi, want) {
	var span = hi - lo || Math.abs(hi) || 1, step = Math.pow(10, Math.floor(Math.log10(span / want)));
	[2, 5, 10].forEach(function (m) { if (span / step > want * 1.5) step = step * m / (m === 2 ? 1 : m === 5 ? 2 : 5); });
	var t = [], v = Math.ceil(lo / step) * step;
	for (; v <= hi + step * 1e-9 && t.length < 50; v += step) t.push(v);
	return t;
}

function historyPage() {
	var d = GPUORCH.data.history, box = document.getElementById("chart");
	if (!d || !box) return;
	var pts = d.points, n = d.nruns, W = 900, H = 420, L = 70, R = 20, T = 20, B = 40;
	var series = [];
	pts.forEach(function (p) { if (series.indexOf(p.gpu) < 0) series.push(p.gpu); });
	var view = { x0: 0.5, x1: Math.max(n, 1) + 0.5 };
	var svg = sv("svg", { id: "history-svg", viewBox: "0 0 " + W + " " + H, width: W, height: H });
	box.appendChild(svg);
	var legend = document.getElementById("legend");
	series.forEach(function (s, i) {
		var li = el("li", {}, s);
		li.style.color = COLORS[i % COLORS.length];
		legend.appendChild(li);
	});

	function draw() {
		var vis = pts.filter(function (p) { return p.index >= view.x0 && p.index <= view.x1; });
		var ys = [];
		(vis.length ? vis : pts).forEach(function (p) {
			ys.push(p.value);
			if (p.p10 !== undefined) { ys.push(p.p10); ys.push(p.p90); }
		});
		var y0 = Math.min.apply(null, ys.concat([Infinity])), y1 = Math.max.apply(null, ys.concat([-Infinity]));
		if (!isFinite(y0)) { y0 = 0; y1 = 1; }
		if (y0 === y1) { y0 -= Math.abs(y0) * 0.05 || 1; y1 += Math.abs(y1) * 0.05 || 1; }
		var pad = (y1 - y0) * 0.05;
		y0 -= pad; y1 += pad;
		function X(i) { return L + (i - view.x0) / (view.x1 - view.x0) * (W - L - R); }
		function Y(v) { return T + (y1 - v) / (y1 - y0) * (H - T - B); }
		svg.textContent = "";
		var clip = sv("clipPath", { id: "plot-clip" });
		clip.appendChild(sv("rect", { x: L, y: T, width: W - L - R, height: H - T - B }));
		svg.appendChild(clip);
		niceTicks(y0, y1, 6).forEach(function (v) {
			svg.appendChild(sv("line", { x1: L, x2: W - R, y1: Y(v), y2: Y(v), "class": "grid" }));
			var t = sv("text", { x: L - 6, y: Y(v) + 4, "text-anchor": "end" });
			t.textContent = +v.toPrecision(4);
			svg.appendChild(t);
		});
		var ylab = sv("text", { x: 14, y: T + (H - T - B) / 2, transform: "rotate(-90 14 " + (T + (H - T - B) / 2) + ")", "text-anchor": "middle" });
		ylab.textContent = d.metric + " (" + (d.unit || "") + ")";
		svg.appendChild(ylab);
		var xlab = sv("text", { x: L + (W - L - R) / 2, y: H - 6, "text-anchor": "middle" });
		xlab.textContent = "run, in commit order (" + Math.ceil(view.x0) + "-" + Math.floor(view.x1) + " of " + n + ")";
		svg.appendChild(xlab);
		var plot = sv("g", { "clip-path": "url(#plot-clip)" });
		svg.appendChild(plot);
		series.forEach(function (s, si) {
			var c = COLORS[si % COLORS.length];
			var sp = pts.filter(function (p) { return p.gpu === s; });
			var band = sp.filter(function (p) { return p.p10 !== undefined; });
			if (band.length > 1) {
				var up = band.map(function (p) { return X(p.index) + "," + Y(p.p90); });
				var down = band.slice().reverse().map(function (p) { return X(p.index) + "," + Y(p.p10); });
				plot.appendChild(sv("polygon", { points: up.concat(down).join(" "), fill: c, "fill-opacity": 0.15, "class": "band" }));
			}
			if (sp.length > 1)
				plot.appendChild(sv("polyline", { points: sp.map(function (p) { return X(p.index) + "," + Y(p.value); }).join(" "),
								 fill: "none", stroke: c, "stroke-width": 1.5, "class": "median" }));
			sp.forEach(function (p) {
				var a = sv("a", { href: runHref(p.key), "class": "pt-link" });
				var dot = sv("circle", { cx: X(p.index), cy: Y(p.value), r: p.step === "regression" ? 5 : 3.5,
							 fill: c, "class": "pt", "data-run": p.run_id });
				var tip = sv("title");
				tip.textContent = p.run_id + " " + (p.commit || "").slice(0, 10) + " on " + p.gpu + ": " +
					+p.value.toPrecision(5) + " " + (d.unit || "") + (p.step ? " (" + p.step + ")" : "");
				dot.appendChild(tip);
				a.appendChild(dot);
				plot.appendChild(a);
			});
		});
	}
	draw();
	/* wheel: zoom the runs' axis around the pointer; drag: pan; double click: all */
	function at(ev) {
		var r = svg.getBoundingClientRect(), f = ((ev.clientX - r.left) * W / r.width - L) / (W - L - R);
		return view.x0 + Math.min(1, Math.max(0, f)) * (view.x1 - view.x0);
	}
	function setView(a, b) {
		var lo = 0.5, hi = Math.max(n, 1) + 0.5;
		if (b - a < 2) { var m = (a + b) / 2; a = m - 1; b = m + 1; }
		if (b - a > hi - lo) { a = lo; b = hi; }
		if (a < lo) { b += lo - a; a = lo; }
		if (b > hi) { a -= b - hi; b = hi; }
		view.x0 = a; view.x1 = b;
		draw();
	}
	svg.addEventListener("wheel", function (ev) {
		ev.preventDefault();
		var c = at(ev), k = ev.deltaY < 0 ? 0.8 : 1.25;
		setView(c - (c - view.x0) * k, c + (view.x1 - c) * k);
	}, { passive: false });
	var drag = null;
	svg.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX, x0: view.x0, x1: view.x1 }; });
	window.addEventListener("mouseup", function () { drag = null; });
	svg.addEventListener("mousemove", function (ev) {
		if (!drag) return;
		var r = svg.getBoundingClientRect(), dx = (ev.clientX - drag.x) * W / r.width / (W - L - R) * (drag.x1 - drag.x0);
		if (Math.abs(ev.clientX - drag.x) > 3) setView(drag.x0 - dx, drag.x1 - dx);
	});
	document.getElementById("zoom-reset").addEventListener("click", function () { setView(0.5, n + 0.5); });
}

/* ---- compare: two runs' figures side by side (the runs' figures.js) ---- */

function loadRun(key, done) {
	var s = el("script", { src: root() + "run/" + key + "/figures.js" });
	s.onload = function () { done(GPUORCH.runs[key]); };
	s.onerror = function () { done(null); };
	document.head.appendChild(s);
}

function comparePage() {
	var q = new URLSearchParams(location.search), a = q.get("a"), b = q.get("b");
	var msg = document.getElementById("compare-what");
	if (!a || !b) { msg.textContent = "pick two runs in the index to compare them"; return; }
	loadRun(a, function (ra) {
		loadRun(b, function (rb) {
			if (!ra || !rb) { msg.textContent = "run " + (!ra ? a : b) + " is not in this site"; return; }
			msg.textContent = "";
			msg.appendChild(el("a", { href: runHref(a) }, a));
			msg.appendChild(document.createTextNode(" (A) against "));
			msg.appendChild(el("a", { href: runHref(b) }, b));
			msg.appendChild(document.createTextNode(" (B): B / A of each figure both runs have on a GPU model " +
				"(a ratio of the medians, not a verdict: `gpuorch compare A B` judges the samples, " +
				"and rows on different GPU instances with its cross-instance factor)"));
			var body = document.querySelector("#compare-table tbody"), byKey = {};
			ra.figures.forEach(function (f) { byKey[f.gpu + "|" + f.what] = f; });
			rb.figures.forEach(function (f) {
				var fa = byKey[f.gpu + "|" + f.what], tr = el("tr", { "class": "figure" });
				var ratio = fa && fa.value ? f.value / fa.value : null;
				[f.what, f.gpu, fa ? +fa.value.toPrecision(5) : "-", +f.value.toPrecision(5), f.unit || "",
				 ratio === null ? "only in B" : ratio.toFixed(3)].forEach(function (v) { tr.appendChild(el("td", {}, v)); });
				/* no colour, no verdict: a ratio of two medians is not one (issue 14);
				 * `gpuorch compare` judges the samples and the GPU instances */
				body.appendChild(tr);
			});
		});
	});
}

document.addEventListener("DOMContentLoaded", function () {
	var page = document.body.getAttribute("data-page");
	if (page === "index") indexPage();
	else if (page === "history") historyPage();
	else if (page === "compare") comparePage();
});
