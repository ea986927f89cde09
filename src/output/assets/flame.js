(function () {
	'use strict';
	var cfg = ebprofFlame, usable = cfg.width - 2 * cfg.xpad;
	var SVGNS = 'http://www.w3.org/2000/svg', HL = cfg.highlight;
	var framesG = document.getElementById('frames');
	var details = document.getElementById('details');
	var matched = document.getElementById('matched');
	var unzoomB = document.getElementById('unzoom');
	var searchB = document.getElementById('search');
	var probe = document.getElementById('probe');
	var frames = [], charw = 7.2, searching = false;

	function first(g, tag) {
		var l = g.getElementsByTagName(tag);
		return l.length ? l[0] : null;
	}

	/* Each frame is a <g>: its <title> holds name, value and kind, one per line. */
	function init() {
		var kids = framesG.childNodes, i, g, r, tt, nl, len;
		for (i = 0; i < kids.length; i++) {
			g = kids[i];
			if (g.nodeType !== 1)
				continue;
			r = first(g, 'rect');
			tt = first(g, 'title').textContent;
			nl = tt.indexOf('\n');
			g.ebprofIndex = frames.length;
			frames.push({
				g: g, r: r, t: first(g, 'text'),
				name: nl < 0 ? tt : tt.substring(0, nl),
				info: tt.replace(/\n/g, ' | '),
				x: parseFloat(r.getAttribute('x')),
				w: parseFloat(r.getAttribute('width')),
				y: parseFloat(r.getAttribute('y')),
				fill: r.getAttribute('fill')
			});
		}
		if (probe && probe.getComputedTextLength) {
			len = probe.getComputedTextLength();
			if (len > 0)
				charw = len / probe.textContent.length;
		}
	}

	function frameOf(el) {
		while (el && el.parentNode !== framesG)
			el = el.parentNode;
		return el ? frames[el.ebprofIndex] : null;
	}

	/* The name, or as much of it as fits followed by '..', or nothing. */
	function fit(f, x, w) {
		var n = Math.floor((w - 6) / charw), s = '';
		if (n >= 3)
			s = f.name.length <= n ? f.name : f.name.substring(0, n - 2) + '..';
		if (!f.t) {
			if (!s)
				return;
			f.t = document.createElementNS(SVGNS, 'text');
			f.t.setAttribute('y', f.y + cfg.baseline);
			f.g.appendChild(f.t);
		}
		f.t.setAttribute('x', (x + 3).toFixed(2));
		f.t.textContent = s;
	}

	function place(f, x, w, cls) {
		f.g.style.display = '';
		f.g.setAttribute('class', cls);
		f.r.setAttribute('x', x.toFixed(2));
		f.r.setAttribute('width', w.toFixed(2));
		fit(f, x, w);
	}

	/* Is a further from the root than b? */
	function deeper(a, b) {
		return cfg.inverted ? a.y > b.y : a.y < b.y;
	}

	function unzoom() {
		var i;
		for (i = 0; i < frames.length; i++)
			place(frames[i], frames[i].x, frames[i].w, '');
		unzoomB.style.display = 'none';
	}

	/* z fills the width; what it called (its ancestors) stays, dimmed; the rest goes.
	 * Positions in the file are rounded to 0.01 px, hence eps. */
	function zoom(z) {
		var scale = usable / z.w, eps = 0.02, i, f;
		if (z === frames[0]) {
			unzoom();
			return;
		}
		for (i = 0; i < frames.length; i++) {
			f = frames[i];
			if (f === z || (deeper(f, z) && f.x >= z.x - eps && f.x + f.w <= z.x + z.w + eps))
				place(f, cfg.xpad + (f.x - z.x) * scale, f.w * scale, '');
			else if (deeper(z, f) && f.x <= z.x + eps && f.x + f.w >= z.x + z.w - eps)
				place(f, cfg.xpad, usable, 'anc');
			else
				f.g.style.display = 'none';
		}
		unzoomB.style.display = '';
	}

	function resetSearch() {
		var i;
		for (i = 0; i < frames.length; i++)
			frames[i].r.setAttribute('fill', frames[i].fill);
		matched.textContent = '';
		searchB.textContent = 'Search';
		searching = false;
	}

	/* Highlight the frames whose name matches; the matched share counts a frame inside
	 * another matching frame once. */
	function search(term) {
		var re, iv = [], sum = 0, end = -1, i, f;
		try {
			re = new RegExp(term);
		} catch (e) {
			window.alert('Not a regular expression: ' + term);
			return;
		}
		if (!frames.length)
			return;
		for (i = 0; i < frames.length; i++) {
			f = frames[i];
			if (re.test(f.name)) {
				f.r.setAttribute('fill', HL);
				iv.push([f.x, f.x + f.w]);
			} else {
				f.r.setAttribute('fill', f.fill);
			}
		}
		iv.sort(function (a, b) { return a[0] - b[0]; });
		for (i = 0; i < iv.length; i++) {
			if (iv[i][1] <= end)
				continue;
			sum += iv[i][1] - Math.max(iv[i][0], end);
			end = iv[i][1];
		}
		matched.textContent = 'Matched: ' + (100 * sum / frames[0].w).toFixed(1) + '%';
		searchB.textContent = 'Reset Search';
		searching = true;
	}

	function askSearch() {
		var term = window.prompt('Search frames (regular expression):', '');
		if (term)
			search(term);
	}

	init();
	framesG.addEventListener('click', function (e) {
		var f = frameOf(e.target);
		if (f)
			zoom(f);
	});
	framesG.addEventListener('mouseover', function (e) {
		var f = frameOf(e.target);
		if (f)
			details.textContent = f.info;
	});
	framesG.addEventListener('mouseout', function () {
		details.textContent = ' ';
	});
	unzoomB.addEventListener('click', unzoom);
	searchB.addEventListener('click', function () {
		if (searching)
			resetSearch();
		else
			askSearch();
	});
	document.addEventListener('keydown', function (e) {
		if ((e.ctrlKey && e.keyCode === 70) || e.key === '/') {
			e.preventDefault();
			askSearch();
		} else if (e.keyCode === 27) {
			unzoom();
			resetSearch();
		}
	});
	/* refit the names with the font's real width */
	if (Math.abs(charw - 7.2) > 0.05)
		unzoom();
}());
