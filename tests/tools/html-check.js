#!/usr/bin/env node
// Opens an ebprof HTML report in a real browser (Debian's chromium through playwright-core) and
// uses it the way a reader does: sort the sites table (by Count, PID, Temporary), open a row's
// stack and a temporary site's lifetimes, filter, switch the flame graph's sample type, zoom
// into a frame, search, look at the chart. Fails on any console error, page error or network
// request (the report must be self-contained), then saves a full-page screenshot.
//
// Usage: node tests/tools/html-check.js REPORT.html SCREENSHOT.png
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
	const [file, shot] = process.argv.slice(2);
	if (!file || !shot) {
		process.stderr.write('usage: node html-check.js REPORT.html SCREENSHOT.png\n');
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
		for (const id of ['processes', 'timeline', 'sites', 'flame', 'drops'])
			check(await page.$(`#${id}`), `no section #${id}`);
		await checkSites(page);
		await checkFlame(page);
		await checkChart(page);
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
		await page.screenshot({ path: shot, fullPage: true,
					clip: { x: 0, y: 0, width: 1400, height: Math.min(height, 12000) } });
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
