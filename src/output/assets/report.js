(function () {
	'use strict';
	var data = JSON.parse(document.getElementById('ebprof-data').textContent);
	var strs = data.strs;
	var SVGNS = 'http://www.w3.org/2000/svg';
	var COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b',
		      '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];

	function el(tag, cls, text) {
		var e = document.createElement(tag);
		if (cls)
			e.className = cls;
		if (text !== undefined && text !== null)
			e.textContent = text;
		return e;
	}

	function svgEl(tag, attrs, parent) {
		var e = document.createElementNS(SVGNS, tag), k;
		for (k in attrs)
			if (Object.prototype.hasOwnProperty.call(attrs, k))
				e.setAttribute(k, attrs[k]);
		if (parent)
			parent.appendChild(e);
		return e;
	}

	/* The units of the C side (render__bytes, render__duration), so numbers read alike. */
	function bytes(v) {
		var units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'], u = 0, d = v / 1024;
		if (v < 1024)
			return v + ' B';
		while (d >= 1023.95 && u + 1 < units.length) {
			d /= 1024;
			u++;
		}
		return d.toFixed(1) + ' ' + units[u];
	}

	function duration(ns) {
		if (ns < 1000)
			return ns + ' ns';
		if (ns < 999950)
			return (ns / 1e3).toFixed(1) + ' us';
		if (ns < 999950000)
			return (ns / 1e6).toFixed(1) + ' ms';
		if (ns < 59995000000)
			return (ns / 1e9).toFixed(2) + ' s';
		return Math.floor(ns / 60e9) + 'm ' +
			('0' + Math.floor(ns / 1e9 % 60)).slice(-2) + 's';
	}

	function amount(v, unit) {
		if (unit === 'bytes')
			return bytes(v);
		if (unit === 'nanoseconds')
			return duration(v);
		return String(v) + (unit === 'count' ? '' : ' ' + unit);
	}

	/* ---- stacks of the table rows ----------------------------------------------- */

	/* data.locs[i]: [module or -1, address, line...]; a line is [function, file or -1, line,
	 * flags], innermost (inlined) first; flags: 1 allocator, 2 not symbolized. */
	function stackText(key) {
		var locs = data.stk[key], out = [], i, j, L;
		if (!locs)
			return '';
		for (i = 0; i < locs.length; i++) {
			L = data.locs[locs[i]];
			if (L[0] >= 0)
				out.push(strs[L[0]]);
			for (j = 2; j < L.length; j++) {
				out.push(strs[L[j][0]]);
				if (L[j][1] >= 0)
					out.push(strs[L[j][1]] + ':' + L[j][2]);
			}
		}
		return out.join(' ');
	}

	function add(parent, cls, text) {
		if (parent.firstChild)
			parent.appendChild(document.createTextNode(' '));
		parent.appendChild(el('span', cls, text));
	}

	function stackList(key) {
		var locs = data.stk[key], ol, li, i, j, L, ln, no = 0, src;
		if (!locs)
			return el('p', 'empty', '(stack not included)');
		if (!locs.length)
			return el('p', 'empty', '(no stack: it could not be recorded)');
		ol = el('ol', 'stack');
		for (i = 0; i < locs.length; i++) {
			L = data.locs[locs[i]];
			for (j = 2; j < L.length; j++, no++) {
				ln = L[j];
				li = el('li', (ln[3] & 1 ? 'alloc' : '') +
					(ln[3] & 2 ? ' unsym' : '') + (ln[3] & 4 ? ' synth' : ''));
				li.title = L[1];
				/* blanks between the parts, so a copied stack reads as text */
				add(li, 'no', '#' + no);
				add(li, 'fn', strs[ln[0]]);
				if (ln[1] >= 0) {
					src = strs[ln[1]] + (ln[2] > 0 ? ':' + ln[2] : '');
					add(li, 'src', src);
				}
				if (L[0] >= 0)
					add(li, 'mod', '[' + strs[L[0]] + ']');
				if (j + 1 < L.length)
					add(li, 'inl', 'inlined');
				if (ln[3] & 4)
					add(li, 'inl', 'no code');
				ol.appendChild(li);
			}
		}
		return ol;
	}

	/* A log2 histogram, [[label, count], ...], as a table of bars; null when empty. */
	function histTable(h, cls, caption, what, count) {
		var t, tr, i, max = 0, bar;
		if (!h || !h.length)
			return null;
		for (i = 0; i < h.length; i++)
			max = Math.max(max, h[i][1]);
		t = el('table', 'hist ' + cls);
		t.createCaption().textContent = caption;
		tr = t.insertRow(-1);
		tr.appendChild(el('th', '', what));
		tr.appendChild(el('th', 'num', count));
		tr.appendChild(el('th', '', ''));
		for (i = 0; i < h.length; i++) {
			tr = t.insertRow(-1);
			tr.appendChild(el('td', '', h[i][0]));
			tr.appendChild(el('td', 'num', String(h[i][1])));
			bar = el('span', 'bar ' + cls);
			bar.style.width = Math.max(1, Math.round(200 * h[i][1] / max)) + 'px';
			tr.insertCell(-1).appendChild(bar);
		}
		return t;
	}

	/* The site's temporaries and lifetime histogram; null when it has neither. */
	function lifeBox(key) {
		var tp = data.temp && data.temp[key], box, t, msg;
		t = histTable(data.life && data.life[key], 'life', 'Lifetimes of freed blocks',
			      'lifetime', 'frees');
		if (!tp && !t)
			return null;
		box = el('div', 'life-box');
		if (tp) {
			msg = 'Temporary: ' + tp[0];
			if (tp[1] > 0)
				msg += ' of ' + tp[1] + ' allocations (' +
				       (100 * tp[0] / tp[1]).toFixed(1) + '%)';
			box.appendChild(el('p', 'temp', msg + ' freed before their thread ' +
					      'allocated again'));
		}
		if (t)
			box.appendChild(t);
		return box;
	}

	/* ---- sortable, filterable tables with rows that open on their stack --------- */

	/*
	 * A long table shows its first data-page rows (in the current order, of those the filter
	 * lets through) until asked for all: laying out thousands of rows takes the browser
	 * seconds on every sort. The page marks the rows past the first page "more" so they are
	 * hidden from the start; from then on each row's display is set here.
	 */
	function Table(table) {
		var self = this, body = table.tBodies[0], i, tr, ths, filter, page;
		this.table = table;
		this.body = body;
		this.rows = [];
		this.col = -1;
		this.desc = false;
		this.term = '';
		page = parseInt(table.getAttribute('data-page'), 10);
		this.limit = page > 0 ? page : Infinity;
		for (i = 0; i < body.rows.length; i++) {
			tr = body.rows[i];
			tr.ebprofRow = { tr: tr, detail: null, text: null, order: i, shown: true };
			this.rows.push(tr.ebprofRow);
		}
		ths = table.tHead.rows[0].cells;
		for (i = 0; i < ths.length; i++) {
			if (!ths[i].getAttribute('data-sort'))
				continue;
			ths[i].tabIndex = 0;
			ths[i].addEventListener('click', this.sortBy.bind(this, i));
			ths[i].addEventListener('keydown', function (e) {
				if (e.keyCode === 13 || e.keyCode === 32) {
					e.preventDefault();
					e.target.click();
				}
			});
		}
		if (table.getAttribute('data-expand')) {
			body.addEventListener('click', function (e) {
				var r = self.rowOf(e.target);
				if (r)
					self.toggle(r);
			});
			body.addEventListener('keydown', function (e) {
				var r = self.rowOf(e.target);
				if (r && e.target === r.tr && (e.keyCode === 13 || e.keyCode === 32)) {
					e.preventDefault();
					self.toggle(r);
				}
			});
		}
		this.count = document.getElementById(table.id + '-count');
		if (this.count && this.limit < this.rows.length) {
			this.more = el('button', 'more', 'Show all ' + this.rows.length + ' rows');
			this.more.type = 'button';
			this.more.addEventListener('click', function () {
				self.limit = Infinity;
				self.update();
			});
			this.count.parentNode.appendChild(this.more);
		}
		filter = document.getElementById(table.id + '-filter');
		if (filter) {
			filter.addEventListener('input', function () {
				window.clearTimeout(self.timer);
				self.timer = window.setTimeout(function () {
					self.filter(filter.value);
				}, 120);
			});
			this.term = filter.value.trim().toLowerCase();
		}
		this.update();
		for (i = 0; i < this.rows.length; i++)
			this.rows[i].tr.classList.remove('more');
	}

	Table.prototype.rowOf = function (node) {
		while (node && node.parentNode !== this.body)
			node = node.parentNode;
		return node && node.ebprofRow ? node.ebprofRow : null;
	};

	Table.prototype.toggle = function (r) {
		var td, key = r.tr.getAttribute('data-s'), h, box, open;
		if (!r.detail) {
			r.detail = document.createElement('tr');
			r.detail.className = 'detail';
			td = r.detail.insertCell(-1);
			td.colSpan = r.tr.cells.length;
			box = el('div', 'detail-box');
			box.appendChild(stackList(key));
			h = histTable(data.hist[key], 'size', 'Request sizes', 'request size',
				      'allocations');
			if (h)
				box.appendChild(h);
			h = lifeBox(key);
			if (h)
				box.appendChild(h);
			td.appendChild(box);
			this.body.insertBefore(r.detail, r.tr.nextSibling);
			open = true;
		} else {
			open = !r.tr.classList.contains('open');
			r.detail.style.display = open ? '' : 'none';
		}
		r.tr.classList.toggle('open', open);
		r.tr.setAttribute('aria-expanded', open ? 'true' : 'false');
	};

	/* Show the rows the filter lets through, up to the limit; only changed rows are touched. */
	Table.prototype.update = function () {
		var rows = this.rows, term = this.term, match = 0, shown = 0, msg = '';
		var i, r, ok, vis;
		for (i = 0; i < rows.length; i++) {
			r = rows[i];
			if (term && r.text === null)
				r.text = (r.tr.textContent + ' ' +
					  stackText(r.tr.getAttribute('data-s'))).toLowerCase();
			ok = !term || r.text.indexOf(term) >= 0;
			match += ok ? 1 : 0;
			vis = ok && shown < this.limit;
			shown += vis ? 1 : 0;
			if (vis !== r.shown) {
				r.tr.style.display = vis ? '' : 'none';
				r.shown = vis;
			}
			if (r.detail)
				r.detail.style.display = vis && r.tr.classList.contains('open') ? '' : 'none';
		}
		if (term)
			msg = match + ' of ' + rows.length + ' rows match';
		if (shown < match)
			msg += (msg ? '; ' : '') + 'showing the first ' + shown;
		if (this.count)
			this.count.textContent = msg;
		if (this.more)
			this.more.style.display = shown < match ? '' : 'none';
	};

	function cellKey(td, num) {
		var v;
		if (!num)
			return td.textContent.toLowerCase();
		v = parseFloat(td.getAttribute('data-v'));
		return isNaN(v) ? -Infinity : v;
	}

	/* Amounts sort biggest first on the first click, ranks and text in ascending order; a
	 * second click reverses. Ties keep the report's order, so the sort is stable. */
	Table.prototype.sortBy = function (col) {
		var ths = this.table.tHead.rows[0].cells;
		var how = ths[col].getAttribute('data-sort');
		var rows = this.rows, frag = document.createDocumentFragment(), i, dir;
		var num = how === 'num' || how === 'rank';
		this.desc = this.col === col ? !this.desc : how === 'num';
		this.col = col;
		dir = this.desc ? -1 : 1;
		for (i = 0; i < rows.length; i++)
			rows[i].key = cellKey(rows[i].tr.cells[col], num);
		rows.sort(function (a, b) {
			if (a.key < b.key)
				return -dir;
			if (a.key > b.key)
				return dir;
			return a.order - b.order;
		});
		this.update();
		for (i = 0; i < rows.length; i++) {
			frag.appendChild(rows[i].tr);
			if (rows[i].detail)
				frag.appendChild(rows[i].detail);
		}
		this.body.appendChild(frag);
		for (i = 0; i < ths.length; i++) {
			ths[i].classList.remove('asc', 'desc');
			if (ths[i].getAttribute('data-sort'))
				ths[i].setAttribute('aria-sort', 'none');
		}
		ths[col].classList.add(this.desc ? 'desc' : 'asc');
		ths[col].setAttribute('aria-sort', this.desc ? 'descending' : 'ascending');
	};

	/* Case-insensitive substring of the row's cells or of any frame of its stack. */
	Table.prototype.filter = function (term) {
		this.term = term.trim().toLowerCase();
		this.update();
	};

	/* ---- charts of the series --------------------------------------------------- */

	function niceStep(range, n) {
		var raw = range / n, x;
		var mag = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10));
		x = raw / mag;
		return (x < 1.5 ? 1 : x < 3 ? 2 : x < 7 ? 5 : 10) * mag;
	}

	function decimals(step) {
		return Math.max(0, Math.min(6, -Math.floor(Math.log(step) / Math.LN10 + 1e-9)));
	}

	/* A scale for the y axis: values in the unit's steps (bytes in KiB, MiB, ...). */
	function yScale(max, unit) {
		var div = 1, suffix = unit === 'count' ? '' : ' ' + unit, names, i;
		if (unit === 'bytes') {
			names = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
			for (i = 0; i + 1 < names.length && max >= div * 1024; i++)
				div *= 1024;
			suffix = ' ' + names[i];
		}
		return { div: div, suffix: suffix };
	}

	function xScale(maxNs) {
		if (maxNs >= 180e9)
			return { div: 60e9, suffix: ' min' };
		if (maxNs >= 1e9)
			return { div: 1e9, suffix: ' s' };
		if (maxNs >= 1e6)
			return { div: 1e6, suffix: ' ms' };
		return { div: 1e3, suffix: ' us' };
	}

	/* The value of a series at time t: its last point at or before t. */
	function valueAt(s, t) {
		var lo = 0, hi = s.t.length - 1, mid;
		if (!s.t.length || t < s.t[0])
			return null;
		while (lo < hi) {
			mid = (lo + hi + 1) >> 1;
			if (s.t[mid] <= t)
				lo = mid;
			else
				hi = mid - 1;
		}
		return s.v[lo];
	}

	function chart(div) {
		var name = div.getAttribute('data-series'), series = [], i, j, s;
		var W = 960, H = 300;
		var ml = 80, mr = 16, mt = 12, mb = 42, pw = W - ml - mr, ph = H - mt - mb;
		var xmax = data.duration > 0 ? data.duration : 0, ymax = 0;
		var xs, ys, step, v, x, y, svg;
		var g, pts, legend, item, sw, cursor, readout, unit;
		for (i = 0; i < data.series.length; i++) {
			if (data.series[i].name === name)
				series.push(data.series[i]);
		}
		if (!series.length)
			return;
		unit = series[0].unit;
		for (i = 0; i < series.length; i++) {
			s = series[i];
			for (j = 0; j < s.t.length; j++) {
				xmax = Math.max(xmax, s.t[j]);
				ymax = Math.max(ymax, s.v[j]);
			}
		}
		/* a peak between two samples is higher than both: room for its marker */
		for (j = 0; name === 'live_bytes' && j < (data.peaks || []).length; j++)
			ymax = Math.max(ymax, data.peaks[j].v);
		xmax = xmax > 0 ? xmax : 1;
		ymax = ymax > 0 ? ymax : 1;
		xs = xScale(xmax);
		ys = yScale(ymax, unit);
		div.textContent = '';
		svg = svgEl('svg', { viewBox: '0 0 ' + W + ' ' + H, 'class': 'chart-svg',
				     role: 'img', 'aria-label': name + ' over time, per process' }, div);
		g = svgEl('g', { 'class': 'axis' }, svg);
		/* y: 0 to the top tick at or above the maximum */
		step = niceStep(ymax / ys.div, 5);
		ymax = Math.ceil(ymax / ys.div / step - 1e-9) * step * ys.div;
		for (v = 0; v <= ymax / ys.div + step / 2; v += step) {
			y = mt + ph - ph * v * ys.div / ymax;
			svgEl('line', { x1: ml, x2: ml + pw, y1: y, y2: y, 'class': 'grid' }, g);
			svgEl('text', { x: ml - 6, y: y + 4, 'text-anchor': 'end' }, g).textContent =
				v.toFixed(decimals(step)) + ys.suffix;
		}
		step = niceStep(xmax / xs.div, 8);
		for (v = 0; v <= xmax / xs.div + 1e-9; v += step) {
			x = ml + pw * v * xs.div / xmax;
			svgEl('line', { x1: x, x2: x, y1: mt + ph, y2: mt + ph + 5 }, g);
			svgEl('text', { x: x, y: mt + ph + 18, 'text-anchor': 'middle' },
			      g).textContent = v.toFixed(decimals(step)) + xs.suffix;
		}
		svgEl('line', { x1: ml, x2: ml + pw, y1: mt + ph, y2: mt + ph }, g);
		svgEl('line', { x1: ml, x2: ml, y1: mt, y2: mt + ph }, g);
		svgEl('text', { x: ml + pw / 2, y: H - 4, 'text-anchor': 'middle',
				'class': 'title' }, g).textContent = 'time since the start of the run';
		legend = el('div', 'legend');
		for (i = 0; i < series.length; i++) {
			s = series[i];
			pts = [];
			for (j = 0; j < s.t.length; j++)
				pts.push((ml + pw * s.t[j] / xmax).toFixed(1) + ',' +
					 (mt + ph - ph * s.v[j] / ymax).toFixed(1));
			/* one point alone draws nothing: hold it flat to the end of the run */
			if (s.t.length === 1)
				pts.push((ml + pw).toFixed(1) + ',' +
					 (mt + ph - ph * s.v[0] / ymax).toFixed(1));
			svgEl('polyline', { points: pts.join(' '), fill: 'none', 'class': 'line',
					    stroke: COLORS[i % COLORS.length] }, svg);
			/* the process's exact peak, where the kernel saw it (live bytes only) */
			for (j = 0; name === 'live_bytes' && j < (data.peaks || []).length; j++) {
				if (data.peaks[j].pid !== s.pid)
					continue;
				svgEl('title', {}, svgEl('circle', { 'class': 'peak', r: 4,
					cx: (ml + pw * Math.min(data.peaks[j].t, xmax) / xmax).toFixed(1),
					cy: (mt + ph - ph * Math.min(data.peaks[j].v, ymax) / ymax).toFixed(1),
					stroke: COLORS[i % COLORS.length] }, svg)).textContent = s.label +
					': peak ' + amount(data.peaks[j].v, 'bytes') + ' at ' +
					duration(data.peaks[j].t);
			}
			item = el('span', 'item');
			sw = el('span', 'swatch');
			sw.style.background = COLORS[i % COLORS.length];
			item.appendChild(sw);
			item.appendChild(document.createTextNode(s.label + ', peak ' +
				amount(Math.max.apply(null, s.v.length ? s.v : [0]), s.unit)));
			legend.appendChild(item);
		}
		div.appendChild(legend);
		readout = el('div', 'readout', '\u00a0');
		div.appendChild(readout);
		cursor = svgEl('line', { y1: mt, y2: mt + ph, 'class': 'cursor',
					 visibility: 'hidden' }, svg);
		svg.addEventListener('mousemove', function (e) {
			var r = svg.getBoundingClientRect(), px = (e.clientX - r.left) * W / r.width;
			var t, parts = [], k, val;
			if (px < ml || px > ml + pw) {
				cursor.setAttribute('visibility', 'hidden');
				return;
			}
			t = (px - ml) / pw * xmax;
			cursor.setAttribute('x1', px);
			cursor.setAttribute('x2', px);
			cursor.setAttribute('visibility', 'visible');
			for (k = 0; k < series.length; k++) {
				val = valueAt(series[k], t);
				parts.push(series[k].label + ': ' + (val === null ? '-' : amount(val, unit)));
			}
			readout.textContent = 'at ' + duration(Math.round(t)) + ': ' + parts.join(', ');
		});
		svg.addEventListener('mouseleave', function () {
			cursor.setAttribute('visibility', 'hidden');
		});
	}

	/* ---- flame graphs ----------------------------------------------------------- */

	/*
	 * Each sample type's flame graph is the SVG the .svg output writes, kept in a script
	 * element (the slash of every end tag escaped, so none ends it) and shown in an
	 * iframe of its own, where its script, element ids and keys stay its own. The search
	 * box here drives the SVG's own Search button, answering its prompt with the box's
	 * text.
	 */
	var flameSel = document.getElementById('flame-type');
	var flameBox = document.getElementById('flame-box');
	var flameSearch = document.getElementById('flame-search');
	var flameMatched = document.getElementById('flame-matched');
	var flames = {}, flameCur = null;
	var FLAME_HEAD = '<!DOCTYPE html><html><head><meta charset="utf-8"><style>' +
		'html,body{margin:0;padding:0;overflow:hidden;background:#fbfbf6}' +
		'svg{display:block;width:100%;height:auto}<\/style><\/head><body>';
	var FLAME_TAIL = '<\/body><\/html>';

	function flameFit(f) {
		var d = f.contentDocument, svg = d && d.querySelector('svg');
		if (svg)
			f.style.height = Math.ceil(svg.getBoundingClientRect().height) + 'px';
	}

	function click(node) {
		var e = node.ownerDocument.createEvent('MouseEvents');
		e.initEvent('click', true, true);
		node.dispatchEvent(e);
	}

	function flameRunSearch() {
		var f = flameCur, term = flameSearch ? flameSearch.value : '', w, d, b, m, saved;
		if (!f || !f.ebprofReady)
			return;
		w = f.contentWindow;
		d = f.contentDocument;
		b = d.getElementById('search');
		m = d.getElementById('matched');
		if (!b)
			return;
		if (term) {
			try {
				new RegExp(term);
			} catch (e) {
				flameMatched.textContent = 'not a regular expression';
				return;
			}
		}
		/* a search in progress is reset first: the button toggles */
		if (b.textContent !== 'Search')
			click(b);
		if (term) {
			saved = w.prompt;
			w.prompt = function () {
				return term;
			};
			try {
				click(b);
			} finally {
				w.prompt = saved;
			}
		}
		flameMatched.textContent = m ? m.textContent : '';
	}

	function flameShow(i) {
		var f = flames[i], src, text, at, k;
		for (k in flames)
			if (Object.prototype.hasOwnProperty.call(flames, k))
				flames[k].style.display = 'none';
		if (!f) {
			src = document.getElementById('flame-svg-' + i);
			if (!src)
				return;
			text = src.textContent.replace(/<\\([\/!])/g, '<$1');
			at = text.indexOf('<svg');
			f = el('iframe', 'flame-frame');
			f.title = 'Flame graph of ' + src.getAttribute('data-type');
			f.setAttribute('data-type', src.getAttribute('data-type'));
			f.addEventListener('load', function () {
				f.ebprofReady = true;
				flameFit(f);
				if (f === flameCur)
					flameRunSearch();
			});
			f.srcdoc = FLAME_HEAD + (at >= 0 ? text.substring(at) : text) + FLAME_TAIL;
			flames[i] = f;
			flameBox.appendChild(f);
		}
		f.style.display = '';
		flameCur = f;
		if (f.ebprofReady) {
			flameFit(f);
			flameRunSearch();
		}
	}

	if (flameSel && flameBox) {
		flameSel.addEventListener('change', function () {
			flameShow(flameSel.value);
		});
		if (flameSearch) {
			flameSearch.addEventListener('input', function () {
				window.clearTimeout(flameSearch.timer);
				flameSearch.timer = window.setTimeout(flameRunSearch, 150);
			});
		}
		window.addEventListener('resize', function () {
			if (flameCur)
				flameFit(flameCur);
		});
		flameShow(flameSel.value);
	}

	/* ---- start ------------------------------------------------------------------ */

	(function () {
		var t = document.querySelectorAll('table.sortable'), i;
		var c = document.querySelectorAll('div.chart');
		for (i = 0; i < t.length; i++)
			new Table(t[i]);
		for (i = 0; i < c.length; i++)
			chart(c[i]);
		document.documentElement.className += ' js';
	}());
}());
