#!/usr/bin/env node
// Opens an ebprof HTML report in a real browser (Debian's chromium through playwright-core) and
// uses it the way a reader does: sort the sites table (by Count, PID, Temporary), open a row's
// stack and a temporary site's lifetimes, filter, switch the flame graph's sample type, zoom
// into a frame, search, look at the chart. Fails on any console error, page error or network
// request (the report must be self-contained), then saves a full-page screenshot.
//
// With --leaks REPORT.json (the JSON report of the same `ebprof mem --leaks` run), checks the
// Leaks section instead of the sites table: every process's summary and every lost site's
// numbers equal the JSON's, sorting, the stacks, the filter, suppressed sites marked and last,
// and the flame graph of definitely lost bytes.
//
// With --diff DIFF.json (the JSON of the same `ebprof diff`), checks a comparison's page: no
// process or timeline section, the header's totals and every row's base, new and delta are the
// JSON's, rows by the size of their change, a stack opens, and the flame graph offers the
// differential one (the larger of base and new), base and new, not delta (it can be negative).
//
// Usage: node tests/tools/html-check.js [--leaks REPORT.json | --diff DIFF.json] REPORT.html
//        SCREENSHOT.png
// Exit status: 0 all checks passed, 1 a check failed, 2 usage or no browser.
'use strict';

const fs = require('fs');
const path = require('path');
const url = require('url');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

function fail(msg) {
	const e = new Error(msg);
	e.check = true;
	throw e;
}

function check(cond, msg) {
	if (!cond)
		fail(msg);
}

let step = 'start';
const t0 = Date.now();
function log(s) {
	step = s;
	process.stdout.write(`html-check: [${((Date.now() - t0) / 1000).toFixed(1)} s] ${s}\n`);
}

// The data-v of column col of every row, shown or not, in the table's order.
async function numbers(page, table, col) {
	return page.$$eval(`#${table} tbody tr.row`, (rows, c) =>
		rows.map((r) => parseFloat(r.cells[c].getAttribute('data-v'))), col);
}

async function visibleRows(page, table) {
	return page.$$eval(`#${table} tbody tr.row`, (rows) =>
		rows.filter((r) => r.style.display !== 'none').length);
}

async function headerIndex(page, table, label) {
	return page.$$eval(`#${table} thead th`, (ths, l) =>
		ths.findIndex((th) => th.textContent.trim() === l), label);
}

async function checkSites(page) {
	log('sites table: sort by Count, then by PID');
	const n = await page.$$eval('#sites-table tbody tr.row', (r) => r.length);
	check(n > 0, 'the sites table has no rows');
	const countCol = await headerIndex(page, 'sites-table', 'Count');
	check(countCol > 0, 'the sites table has no Count column');
	const before = await numbers(page, 'sites-table', countCol);
	await page.click(`#sites-table thead th:nth-child(${countCol + 1})`);
	const after = await numbers(page, 'sites-table', countCol);
	const sorted = [...before].sort((a, b) => b - a);
	check(JSON.stringify(after) === JSON.stringify(sorted),
	      `sorting by Count did not order the rows biggest first: ${after.slice(0, 10)}`);
	if (n > 1 && JSON.stringify(before) !== JSON.stringify(sorted))
		process.stdout.write('html-check:   the order changed\n');
	check(await page.$eval(`#sites-table thead th:nth-child(${countCol + 1})`,
			       (th) => th.getAttribute('aria-sort')) === 'descending',
	      'the sorted header is not marked descending');
	// again: ascending
	await page.click(`#sites-table thead th:nth-child(${countCol + 1})`);
	const asc = await numbers(page, 'sites-table', countCol);
	check(JSON.stringify(asc) === JSON.stringify([...before].sort((a, b) => a - b)),
	      'a second click did not reverse the order');
	// the rank column restores the report's order
	await page.click('#sites-table thead th:nth-child(1)');
	const rank = await numbers(page, 'sites-table', 0);
	check(rank.every((v, i) => v === i + 1), 'sorting by # did not restore the ranks');
	const pidCol = await headerIndex(page, 'sites-table', 'PID');
	await page.click(`#sites-table thead th:nth-child(${pidCol + 1})`);
	const pids = await numbers(page, 'sites-table', pidCol);
	check(pids.every((v, i) => i === 0 || pids[i - 1] >= v), 'sorting by PID failed');
	await page.click('#sites-table thead th:nth-child(1)');

	log('sites table: open the first row on its stack');
	await page.click('#sites-table tbody tr.row:first-child td.site');
	const frames = await page.$$eval('#sites-table tr.detail ol.stack li', (l) =>
		l.map((li) => li.textContent));
	check(frames.length > 0, 'opening a row showed no stack');
	check(frames[0].startsWith('#0'), `the stack does not start at frame #0: ${frames[0]}`);
	check(frames.some((f) => /:\d+/.test(f)), 'no frame of the stack has a file:line');
	process.stdout.write(`html-check:   ${frames.length} frames, e.g. ${frames[frames.length > 1 ? 1 : 0]}\n`);
	check(await page.$eval('#sites-table tbody tr.row:first-child',
			       (r) => r.getAttribute('aria-expanded')) === 'true',
	      'the opened row is not marked expanded');

	await checkTemporary(page);

	log('sites table: filter');
	const page0 = await visibleRows(page, 'sites-table');
	check(page0 > 0 && page0 <= n, `${page0} of ${n} rows shown`);
	const fnName = await page.$eval('#sites-table tbody tr.row:first-child .fn',
					(e) => e.textContent);
	await page.fill('#sites-table-filter', 'no such function at all 12345');
	await page.waitForFunction(() => /^0 of/.test(document.getElementById('sites-table-count')
		.textContent));
	check(await visibleRows(page, 'sites-table') === 0, 'a filter that matches nothing left rows');
	await page.fill('#sites-table-filter', fnName);
	await page.waitForFunction(() => /match/.test(document.getElementById('sites-table-count')
		.textContent) && !/^0 of/.test(document.getElementById('sites-table-count').textContent));
	const matching = await visibleRows(page, 'sites-table');
	check(matching >= 1 && matching <= page0, `the filter for a site's name shows ${matching} rows`);
	process.stdout.write(`html-check:   "${fnName}": ${await page.$eval('#sites-table-count',
		(c) => c.textContent)}\n`);
	await page.fill('#sites-table-filter', '');
	await page.waitForFunction((want) => [...document.querySelectorAll('#sites-table tbody tr.row')]
		.filter((r) => r.style.display !== 'none').length === want, page0);
	if (page0 < n) {
		log('sites table: show all rows');
		await page.click('button.more');
		check(await visibleRows(page, 'sites-table') === n, '"Show all" did not show all rows');
	}
}

// The Temporary column sorts like the others, its title has the share, and the site with the
// most temporaries opens on its lifetime histogram (time units) and its temporary count.
async function checkTemporary(page) {
	log('sites table: sort by Temporary, open the top site\'s lifetimes');
	const col = await headerIndex(page, 'sites-table', 'Temporary');
	check(col > 0, 'the sites table has no Temporary column');
	const th = `#sites-table thead th:nth-child(${col + 1})`;
	const before = await numbers(page, 'sites-table', col);
	await page.click(th);
	const after = await numbers(page, 'sites-table', col);
	check(JSON.stringify(after) === JSON.stringify([...before].sort((a, b) => b - a)),
	      `sorting by Temporary did not order the rows biggest first: ${after.slice(0, 10)}`);
	check(await page.$eval(th, (e) => e.getAttribute('aria-sort')) === 'descending',
	      'the Temporary header is not marked descending');
	check(after[0] > 0, 'no site has temporaries (the fixture\'s churn() has only those)');
	const top = await page.evaluate((c) => {
		const r = document.querySelector('#sites-table tbody tr.row');
		if (r.getAttribute('aria-expanded') !== 'true')
			r.querySelector('td.site').click();
		const d = r.nextElementSibling;
		return {
			fn: r.querySelector('.fn').textContent,
			title: r.cells[c].getAttribute('title'),
			open: r.getAttribute('aria-expanded'),
			temp: d && d.classList.contains('detail') && d.querySelector('.temp') ?
				d.querySelector('.temp').textContent : '',
			life: d && d.classList.contains('detail') ?
				[...d.querySelectorAll('table.hist.life tr')].slice(1)
					.map((tr) => tr.cells[0].textContent) : [],
		};
	}, col);
	process.stdout.write(`html-check:   ${top.fn}: ${top.title}; lifetimes ${top.life}\n`);
	// memfixture's churn() frees each block before its next malloc: all 100000 are temporary
	check(top.fn === 'churn', `the site with the most temporaries is ${top.fn}, not churn`);
	check(/^100000 of 100000 allocations \(100\.0%\) freed/.test(top.title || ''),
	      `churn's Temporary cell's title is not 100000 of 100000 (100.0%): "${top.title}"`);
	check(top.open === 'true', 'the top temporary site did not open');
	check(/^Temporary: \d+ of \d+ allocations \(\d+\.\d%\)/.test(top.temp),
	      `the opened site does not say its temporaries: "${top.temp}"`);
	check(top.life.length > 0, 'the opened site has no lifetime histogram');
	check(top.life.every((l) => /\d(\.\d+)? ?(ns|us|ms|s|m \d+s|h \d+m)\)?$/.test(l)),
	      `lifetime labels without time units: ${top.life}`);
	// a second click reverses, then back to the report's order
	await page.click(th);
	const asc = await numbers(page, 'sites-table', col);
	check(JSON.stringify(asc) === JSON.stringify([...before].sort((a, b) => a - b)),
	      'a second click on Temporary did not reverse the order');
	await page.click('#sites-table thead th:nth-child(1)');
}

async function flameFrame(page) {
	const handle = await page.waitForFunction(() => {
		const f = [...document.querySelectorAll('#flame-box iframe')]
			.find((x) => x.style.display !== 'none');
		return f && f.ebprofReady ? f : null;
	});
	return handle.asElement().contentFrame();
}

async function checkFlame(page) {
	log('flame graph: the default type is shown');
	const types = await page.$$eval('#flame-type option:not([disabled])', (o) =>
		o.map((x) => ({ value: x.value, type: x.textContent })));
	check(types.length > 0, 'no flame graph to select');
	let frame = await flameFrame(page);
	const title0 = await frame.$eval('#title', (t) => t.textContent);
	check(/alloc_space/.test(title0), `the first flame graph is not alloc_space's: ${title0}`);

	log('flame graph: switch the sample type');
	const other = types.find((t) => /alloc_objects/.test(t.type));
	check(other, 'no alloc_objects flame graph');
	await page.selectOption('#flame-type', other.value);
	frame = await flameFrame(page);
	const title1 = await frame.$eval('#title', (t) => t.textContent);
	check(/alloc_objects/.test(title1), `switching did not show alloc_objects: ${title1}`);
	const h = await page.$eval('#flame-box iframe[data-type="alloc_objects"]',
				   (f) => f.getBoundingClientRect().height);
	check(h > 100, `the flame graph's frame is ${h} px high`);

	log('flame graph: click a frame to zoom');
	// a frame a few levels up, not the full width: zooming makes it fill the width
	const target = await frame.evaluate(() => {
		const gs = [...document.querySelectorAll('#frames > g')];
		let best = -1, bestW = 0;
		gs.forEach((g, i) => {
			const w = parseFloat(g.querySelector('rect').getAttribute('width'));
			if (w > 40 && w < 900 && w > bestW) {
				best = i;
				bestW = w;
			}
		});
		const name = best >= 0 ? gs[best].querySelector('title').textContent.split('\n')[0] : '';
		return { index: best, width: bestW, name: name };
	});
	check(target.index >= 0, 'no flame frame between 40 and 900 px wide to zoom into');
	const g = (await frame.$$('#frames > g'))[target.index];
	await g.click();
	const widthAfter = await frame.evaluate((i) =>
		parseFloat(document.querySelectorAll('#frames > g')[i].querySelector('rect')
			.getAttribute('width')), target.index);
	check(widthAfter > target.width + 1,
	      `zooming did not widen the frame: ${target.width} -> ${widthAfter}`);
	process.stdout.write(`html-check:   ${target.name}: ${target.width.toFixed(1)} -> ` +
			     `${widthAfter.toFixed(1)} px\n`);
	check(await frame.$eval('#unzoom', (b) => b.style.display !== 'none'),
	      'Reset Zoom is not offered after a zoom');
	await frame.click('#unzoom');

	log('flame graph: search');
	// the name of the frame zoomed into, as a regular expression: it matches at least that
	const term = target.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
	await page.fill('#flame-search', term);
	await page.waitForFunction(() =>
		/Matched/.test(document.getElementById('flame-matched').textContent));
	const matched = await page.$eval('#flame-matched', (m) => m.textContent);
	process.stdout.write(`html-check:   /${term}/: ${matched}\n`);
	const lit = await frame.$$eval('#frames rect[fill="#e600e6"]', (r) => r.length);
	check(lit > 0, 'the search highlighted no frame');
	check(!/Matched: 0\.0%/.test(matched), 'the search matched nothing');
	// an invalid expression is said, not thrown
	await page.fill('#flame-search', 'main(');
	await page.waitForFunction(() =>
		/not a regular expression/.test(document.getElementById('flame-matched').textContent));
	await page.fill('#flame-search', term);
	await page.waitForFunction(() =>
		/Matched/.test(document.getElementById('flame-matched').textContent));
	// the search follows to another type
	await page.selectOption('#flame-type', types.find((t) => /alloc_space/.test(t.type)).value);
	frame = await flameFrame(page);
	await frame.waitForFunction(() => /Matched/.test(document.getElementById('matched').textContent));
}

// A comparison's page against the JSON of the same diff.
async function checkDiff(page, report) {
	log('diff: no process or timeline section, the totals are the JSON\'s');
	for (const id of ['processes', 'timeline'])
		check(!(await page.$(`#${id}`)), `a diff has a #${id} section`);
	const sum = (k) => report.sites.reduce((a, s) => a + s[k], 0);
	const meta = await page.$$eval('table.meta tr', (rows) =>
		Object.fromEntries(rows.map((r) => [r.cells[0].textContent, r.cells[1].textContent])));
	process.stdout.write(`html-check:   ${JSON.stringify(meta)}\n`);
	// "51", or "204.1 MiB (214042252 bytes)": the exact number
	const num = (s) => { const m = /\((\d+) /.exec(s); return m ? +m[1] : parseInt(s, 10); };
	check(num(meta['Total base']) === sum('base'),
	      `Total base ${meta['Total base']}, the JSON's ${sum('base')}`);
	check(num(meta['Total new']) === sum('new'),
	      `Total new ${meta['Total new']}, the JSON's ${sum('new')}`);
	check(!Object.keys(meta).some((k) => /^Total (?!base|new)/.test(k)),
	      'a total of another type than base and new');

	log('diff: the rows are the JSON\'s stacks, by the size of their change');
	const heads = await page.$$eval('#sites-table thead th', (t) => t.map((x) => x.textContent));
	check(!heads.includes('PID'), `a PID column in a diff: ${heads}`);
	const col = (l) => heads.indexOf(l);
	check(col('base') > 0 && col('new') > 0 && col('delta') > 0, `columns ${heads}`);
	const rows = await page.$$eval('#sites-table tbody tr.row', (rs, c) => rs.map((r) =>
		c.map((i) => parseFloat(r.cells[i].getAttribute('data-v')))),
		[col('base'), col('new'), col('delta')]);
	const key = (t) => t.join(' ');
	const want = report.sites.map((s) => key([s.base, s.new, s.delta])).sort();
	check(key(rows.map(key).sort()) === key(want),
	      `rows ${JSON.stringify(rows)}, the JSON's ${JSON.stringify(want)}`);
	for (let i = 1; i < rows.length; i++)
		check(Math.abs(rows[i][2]) <= Math.abs(rows[i - 1][2]),
		      `row ${i + 1} changed more than row ${i}`);
	await page.click('#sites-table tbody tr.row:first-child td.site');
	const frames = await page.$$eval('#sites-table tr.detail ol.stack li', (l) =>
		l.map((li) => li.textContent));
	check(frames.length > 0 && frames[0].startsWith('#0'), `the stack: ${frames}`);

	log('diff: the flame graphs');
	const types = await page.$$eval('#flame-type option', (o) => o.map((x) => x.textContent));
	process.stdout.write(`html-check:   ${JSON.stringify(types)}\n`);
	check(types.length === 3 && /larger of base and new/.test(types[0]) &&
	      /^base/.test(types[1]) && /^new/.test(types[2]), `flame types ${types}`);
	let frame = await flameFrame(page);
	check(await frame.$eval('#frames', (g) => g.querySelectorAll('g').length) > 0,
	      'the differential flame graph has no frame');
	const values = await page.$$eval('#flame-type option', (o) => o.map((x) => x.value));
	await page.selectOption('#flame-type', values[2]);
	frame = await flameFrame(page);
	const title = await frame.$eval('#title', (t) => t.textContent);
	check(/new/.test(title), `switching did not show new's: ${title}`);
}

// The Leaks section against the JSON report of the same run.
async function checkLeaks(page, report) {
	log('leaks: every scanned process\'s summary is the JSON\'s');
	check(await page.$('.nav a[href="#leaks"]'), 'no link to the Leaks section');
	const scanned = report.processes.filter((p) => p.leaks);
	check(scanned.length > 0, 'the JSON report has no scanned process');
	for (const proc of scanned) {
		const rows = await page.$$eval(`#leak-sum-${proc.pid} tbody tr`, (trs) =>
			trs.map((tr) => ({
				cls: tr.className,
				title: tr.cells[0].textContent,
				count: parseFloat(tr.cells[1].getAttribute('data-v')),
				bytes: parseFloat(tr.cells[2].getAttribute('data-v')),
				shown: tr.cells[2].textContent,
			})));
		const want = [];
		for (const c of ['definite', 'indirect', 'possible', 'reachable'])
			want.push({ cls: `leak-${c}`, count: proc.leaks[c].count, bytes: proc.leaks[c].bytes });
		for (const h of Object.keys(proc.leaks.reachable_via_heuristic))
			want.push({ cls: 'leak-heuristic', title: `of which reachable via heuristic ${h}`,
				    count: proc.leaks.reachable_via_heuristic[h].count,
				    bytes: proc.leaks.reachable_via_heuristic[h].bytes });
		want.push({ cls: 'leak-suppressed', count: proc.leaks.suppressed.count,
			    bytes: proc.leaks.suppressed.bytes });
		const got = rows.map((r) => want.length && r.cls === 'leak-heuristic' ?
			{ cls: r.cls, title: r.title, count: r.count, bytes: r.bytes } :
			{ cls: r.cls, count: r.count, bytes: r.bytes });
		check(JSON.stringify(got) === JSON.stringify(want),
		      `pid ${proc.pid}'s summary ${JSON.stringify(got)} is not the JSON's ${JSON.stringify(want)}`);
		const scan = await page.$eval(`#leaks-${proc.pid} + p.scan`, (e) => e.textContent);
		check(scan.startsWith(proc.leaks.at_exit ? 'Scanned at its exit' : 'Scanned while it ran'),
		      `pid ${proc.pid}'s scan is said as "${scan}"`);
		check(scan.includes(`(${proc.leaks.scanned_bytes} bytes) of roots and blocks read`),
		      `pid ${proc.pid}'s scan does not say the bytes it read: "${scan}"`);
		process.stdout.write(`html-check:   pid ${proc.pid}: ${rows.map((r) =>
			`${r.title} ${r.count}/${r.bytes}`).join(', ')}\n`);
	}

	log('leaks: the lost sites are the JSON\'s, suppressed ones last and marked');
	const cols = await page.$$eval('#leaks-table thead th', (ths) => ths.map((t) => t.textContent));
	const col = (name) => {
		const i = cols.indexOf(name);
		check(i >= 0, `the lost sites table has no "${name}" column: ${cols}`);
		return i;
	};
	const [cLost, cDef, cInd, cPos] = ['Lost', 'Definitely lost', 'Indirectly lost',
					  'Possibly lost'].map(col);
	const domRows = () => page.$$eval('#leaks-table tbody tr.row', (trs, c) => trs.map((tr) => ({
		n: c.map((i) => [parseFloat(tr.cells[i].getAttribute('data-n')),
				 parseFloat(tr.cells[i].getAttribute('data-v'))]),
		supp: tr.classList.contains('suppressed'),
		badge: !!tr.querySelector('td.site .badge'),
		fn: tr.querySelector('td.site .fn').textContent,
		shown: tr.style.display !== 'none',
	})), [cLost, cDef, cInd, cPos]);
	const key = (r) => JSON.stringify([r.supp, r.n]);
	const dom = await domRows();
	const lost = report.sites.filter((s) => s.leaks &&
		s.leaks.definite.count + s.leaks.indirect.count + s.leaks.possible.count > 0);
	const wantRows = lost.map((s) => {
		const cl = ['definite', 'indirect', 'possible'].map((c) => [s.leaks[c].count,
									  s.leaks[c].bytes]);
		return { supp: s.leaks.suppressed,
			 n: [[cl[0][0] + cl[1][0] + cl[2][0], cl[0][1] + cl[1][1] + cl[2][1]], ...cl] };
	});
	check(dom.length === wantRows.length,
	      `${dom.length} lost sites in the page, ${wantRows.length} in the JSON`);
	check(JSON.stringify(dom.map(key).sort()) === JSON.stringify(wantRows.map(key).sort()),
	      `the lost sites' numbers differ from the JSON's:\n${dom.map(key).sort().join('\n')}\n` +
	      `vs\n${wantRows.map(key).sort().join('\n')}`);
	check(dom.every((r) => r.supp === r.badge), 'a suppressed row without its badge, or the reverse');
	const firstSupp = dom.findIndex((r) => r.supp);
	check(firstSupp < 0 || dom.slice(firstSupp).every((r) => r.supp),
	      'a suppressed site is listed before one that is not');
	const kept = dom.filter((r) => !r.supp).map((r) => r.n[0][1]);
	check(kept.every((v, i) => i === 0 || kept[i - 1] >= v),
	      `the lost sites are not by lost bytes: ${kept}`);
	process.stdout.write(`html-check:   ${dom.length} lost sites, ` +
			     `${dom.filter((r) => r.supp).length} suppressed; first ${dom[0].fn}\n`);

	log('leaks: sort by Definitely lost, then back by #');
	const th = `#leaks-table thead th:nth-child(${cDef + 1})`;
	await page.click(th);
	let now = await domRows();
	const def = now.map((r) => r.n[1][1]);
	check(JSON.stringify(def) === JSON.stringify([...def].sort((a, b) => b - a)),
	      `sorting by Definitely lost did not order the rows biggest first: ${def}`);
	check(def[0] === Math.max(...wantRows.map((r) => r.n[1][1])),
	      `the top row lost ${def[0]} bytes definitely, not the most`);
	check(await page.$eval(th, (e) => e.getAttribute('aria-sort')) === 'descending',
	      'the Definitely lost header is not marked descending');
	const topDef = now[0].fn;
	process.stdout.write(`html-check:   by definitely lost: ${topDef} ${def[0]} bytes\n`);
	await page.click(th);
	now = await domRows();
	check(JSON.stringify(now.map((r) => r.n[1][1])) ===
	      JSON.stringify([...def].sort((a, b) => a - b)), 'a second click did not reverse the order');
	await page.click('#leaks-table thead th:nth-child(1)');
	check(JSON.stringify((await domRows()).map(key)) === JSON.stringify(dom.map(key)),
	      'sorting by # did not restore the order');

	log('leaks: open the first lost site on its stack');
	await page.click('#leaks-table tbody tr.row:first-child td.site');
	const frames = await page.$$eval('#leaks-table tr.detail ol.stack li', (l) =>
		l.map((li) => ({ text: li.textContent, alloc: li.classList.contains('alloc') })));
	check(frames.length > 1, 'opening a lost site showed no stack');
	check(frames[0].alloc && /^#0 (malloc|calloc|realloc)/.test(frames[0].text),
	      `the stack does not start at the allocator: ${frames[0].text}`);
	check(frames.some((f) => f.text.includes(dom[0].fn)), `the stack lacks ${dom[0].fn}`);
	check(frames.some((f) => /\.c:\d+/.test(f.text)), 'no frame of the stack has a file:line');
	process.stdout.write(`html-check:   ${frames.map((f) => f.text).slice(0, 3).join(' | ')}\n`);

	log('leaks: filter');
	const term = 'lose_tree';
	const matching = lost.filter((s) => s.frames.some((f) =>
		(f.function || '').toLowerCase().includes(term))).length;
	check(matching > 0, `no lost site has a frame ${term}`);
	await page.fill('#leaks-table-filter', term);
	await page.waitForFunction(() => /match/.test(document.getElementById('leaks-table-count')
		.textContent));
	const shown = (await domRows()).filter((r) => r.shown).length;
	check(shown === matching, `the filter "${term}" shows ${shown} lost sites, not ${matching}`);
	await page.fill('#leaks-table-filter', '');
	await page.waitForFunction((n) => [...document.querySelectorAll('#leaks-table tbody tr.row')]
		.filter((r) => r.style.display !== 'none').length === n, dom.length);

	log('flame graph: definitely lost bytes');
	const opt = await page.$$eval('#flame-type option', (o) =>
		o.map((x) => ({ value: x.value, text: x.textContent, disabled: x.disabled }))
			.find((x) => x.text.startsWith('definite_space ')));
	check(opt && !opt.disabled, 'no definite_space flame graph to select');
	check(/definitely lost, bytes$/.test(opt.text), `the option does not say what it weighs: ${opt.text}`);
	await page.selectOption('#flame-type', opt.value);
	const frame = await flameFrame(page);
	const title = await frame.$eval('#title', (t) => t.textContent);
	check(/definite_space \(bytes\)/.test(title), `the flame graph shown is not definite_space's: ${title}`);
	const total = report.sites.reduce((a, s) => a + (s.leaks ? s.leaks.definite.bytes : 0), 0);
	const sub = await frame.$eval('#sub', (t) => t.textContent);
	check(new RegExp(`total ${total} B |\\(${total} bytes\\)`).test(sub),
	      `the definite_space flame graph's total is not ${total} bytes: ${sub}`);
	const names = await frame.$$eval('#frames title', (t) => t.map((x) => x.textContent.split('\n')[0]));
	check(names.includes(topDef), `${topDef}, which lost the most, is not in the flame graph`);
	process.stdout.write(`html-check:   ${sub}\n`);
}

async function checkChart(page) {
	log('charts of the series (live bytes, ...)');
	const charts = await page.$$eval('div.chart', (d) => d.map((c) => ({
		name: c.getAttribute('data-series'),
		lines: c.querySelectorAll('polyline').length,
		legend: [...c.querySelectorAll('.legend .item')].map((i) => i.textContent),
		ticks: [...c.querySelectorAll('.axis text')].map((t) => t.textContent),
	})));
	if (!charts.length) {
		check(await page.$('#timeline + p.empty'), 'neither a chart nor a "no samples" message');
		process.stdout.write('html-check:   no samples (message shown)\n');
		return;
	}
	for (const c of charts) {
		check(c.lines > 0, `the ${c.name} chart has no line`);
		check(c.legend.length === c.lines,
		      `the ${c.name} chart has ${c.lines} lines but ${c.legend.length} legend entries`);
		check(c.ticks.some((t) => / (s|ms|us|min)$/.test(t)),
		      `no time units on the ${c.name} chart: ${c.ticks}`);
		if (c.name === 'live_bytes')
			check(c.ticks.some((t) => / (B|KiB|MiB|GiB)$/.test(t)),
			      `no byte units on the live_bytes chart: ${c.ticks}`);
		process.stdout.write(`html-check:   ${c.name}: ${c.legend.join('; ')}\n`);
	}
	const chart = page.locator('div.chart svg').first();
	await chart.hover();
	const readout = await page.$eval('div.chart .readout', (r) => r.textContent);
	check(/^at /.test(readout), `hovering the chart shows no values: "${readout}"`);
	process.stdout.write(`html-check:   hover: ${readout}\n`);
}

async function main() {
	const args = process.argv.slice(2);
	let report = null, diff = null;
	if (args[0] === '--leaks') {
		report = JSON.parse(fs.readFileSync(args[1], 'utf8'));
		args.splice(0, 2);
	} else if (args[0] === '--diff') {
		diff = JSON.parse(fs.readFileSync(args[1], 'utf8'));
		args.splice(0, 2);
	}
	const [file, shot] = args;
	if (!file || !shot) {
		process.stderr.write('usage: node html-check.js [--leaks REPORT.json | --diff ' +
				     'DIFF.json] REPORT.html SCREENSHOT.png\n');
		process.exit(2);
	}
	if (!fs.existsSync(CHROMIUM)) {
		process.stderr.write(`html-check: no browser at ${CHROMIUM} (apt-get install chromium)\n`);
		process.exit(2);
	}
	const { chromium } = require('playwright-core');
	const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
	const problems = [];
	try {
		const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
		page.on('console', (m) => {
			if (m.type() === 'error')
				problems.push(`console error: ${m.text()}`);
		});
		page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
		page.on('dialog', (d) => {
			problems.push(`unexpected dialog: ${d.message()}`);
			d.dismiss().catch(() => {});
		});
		page.on('request', (r) => {
			if (!/^(file|data|blob|about):/.test(r.url()))
				problems.push(`network request: ${r.url()}`);
		});
		page.setDefaultTimeout(15000);
		await page.goto(url.pathToFileURL(path.resolve(file)).href);
		log('page loaded');
		check(/ebprof .* report/.test(await page.title()), 'no ebprof title');
		for (const id of diff ? ['sites', 'flame', 'drops'] :
				  ['processes', 'timeline', 'sites', 'flame', 'drops'])
			check(await page.$(`#${id}`), `no section #${id}`);
		if (diff) {
			await checkDiff(page, diff);
		} else if (report) {
			check(await page.$('#leaks'), 'no section #leaks');
			await checkLeaks(page, report);
		} else {
			await checkSites(page);
			await checkFlame(page);
			await checkChart(page);
		}
		// back to the default flame graph for the picture
		await page.fill('#flame-search', '');
		await page.waitForTimeout(300);
		check(problems.length === 0, problems.join('\n'));
		log('screenshot');
		await page.reload();
		await page.waitForFunction(() => [...document.querySelectorAll('#flame-box iframe')]
			.some((f) => f.ebprofReady));
		// from the top: the tables' sticky headers are drawn where the scroll puts them; and
		// a full page of thousands of rows would take minutes: the top 12000 px at most
		const height = await page.evaluate(() => {
			window.scrollTo(0, 0);
			return document.documentElement.scrollHeight;
		});
		await page.waitForTimeout(100);
		// with --leaks, the Leaks section is the picture
		const top = report ? await page.$eval('#leaks', (e) =>
			Math.floor(e.getBoundingClientRect().top)) : 0;
		await page.screenshot({ path: shot, fullPage: true,
					clip: { x: 0, y: top, width: 1400,
						height: Math.min(height - top, 12000) } });
		check(problems.length === 0, problems.join('\n'));
	} finally {
		await browser.close();
	}
	process.stdout.write('html-check: all checks passed\n');
}

main().catch((e) => {
	process.stderr.write(`html-check: FAILED at "${step}": ${e.check ? e.message : e.stack}\n`);
	process.exit(1);
});
