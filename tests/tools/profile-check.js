#!/usr/bin/env node
// Opens the HTML report of `ebprof profile` in a real browser (Debian's chromium through
// playwright-core) and uses it as a reader does: the findings are those of the JSON report of
// the same run, a finding's mode link opens its tab, every tab switches to its mode's own page,
// and in each page the flame graph zooms. Fails on any console error, page error or network
// request (the page must be self-contained), then saves a screenshot.
//
// Usage: node tests/tools/profile-check.js REPORT.json REPORT.html SCREENSHOT.png
// Exit status: 0 all checks passed, 1 a check failed, 2 usage or no browser.
'use strict';

const fs = require('fs');
const path = require('path');
const url = require('url');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

function check(cond, msg) {
	if (!cond) {
		const e = new Error(msg);
		e.check = true;
		throw e;
	}
}

let step = 'start';
function log(s) {
	step = s;
	process.stdout.write(`profile-check: ${s}\n`);
}

// The part page shown in tab i, once its flame graph is ready.
async function partFrame(page, i) {
	const el = await page.$(`#part-${i}`);
	const frame = await el.contentFrame();
	await frame.waitForFunction(() => [...document.querySelectorAll('#flame-box iframe')]
		.some((f) => f.style.display !== 'none' && f.ebprofReady));
	return frame;
}

async function zoom(part, mode) {
	const handle = await part.waitForFunction(() =>
		[...document.querySelectorAll('#flame-box iframe')]
			.find((f) => f.style.display !== 'none' && f.ebprofReady));
	const flame = await handle.asElement().contentFrame();
	const target = await flame.evaluate(() => {
		const gs = [...document.querySelectorAll('#frames > g')];
		let best = -1, bestW = 0;
		gs.forEach((g, i) => {
			const w = parseFloat(g.querySelector('rect').getAttribute('width'));
			if (w > 20 && w < 900 && w > bestW) {
				best = i;
				bestW = w;
			}
		});
		return { index: best, width: bestW };
	});
	if (target.index < 0) {
		// one stack only: every frame is the full width, nothing to zoom into
		log(`${mode}: no frame narrower than the graph to zoom into`);
		return;
	}
	await (await flame.$$('#frames > g'))[target.index].click();
	const after = await flame.evaluate((i) =>
		parseFloat(document.querySelectorAll('#frames > g')[i].querySelector('rect')
			.getAttribute('width')), target.index);
	check(after > target.width + 1, `${mode}: zooming did not widen the frame ` +
	      `(${target.width} -> ${after})`);
	check(await flame.$eval('#unzoom', (b) => b.style.display !== 'none'),
	      `${mode}: Reset Zoom is not offered after a zoom`);
	await flame.click('#unzoom');
	log(`${mode}: zoomed ${target.width.toFixed(1)} -> ${after.toFixed(1)} px and back`);
}

async function main() {
	const [json, file, shot] = process.argv.slice(2);
	if (!json || !file || !shot) {
		process.stderr.write('usage: node profile-check.js REPORT.json REPORT.html SHOT.png\n');
		process.exit(2);
	}
	if (!fs.existsSync(CHROMIUM)) {
		process.stderr.write(`profile-check: no browser at ${CHROMIUM}\n`);
		process.exit(2);
	}
	const report = JSON.parse(fs.readFileSync(json, 'utf8'));
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
		page.on('request', (r) => {
			if (!/^(file|data|blob|about):/.test(r.url()))
				problems.push(`network request: ${r.url()}`);
		});
		page.setDefaultTimeout(20000);
		await page.goto(url.pathToFileURL(path.resolve(file)).href);
		log('page loaded');
		check(/^ebprof profile/.test(await page.title()), 'no ebprof profile title');

		log('findings: the JSON report\'s, in its order');
		const facts = await page.$$eval('ol.findings .fact', (f) => f.map((x) => x.textContent));
		check(facts.length === report.findings.length,
		      `${facts.length} findings on the page, ${report.findings.length} in the JSON`);
		report.findings.forEach((f, i) => check(facts[i] === f.fact,
			`finding ${i + 1}: "${facts[i]}" on the page, "${f.fact}" in the JSON`));

		log('timeline: one chart per series of each mode, as in the JSON');
		const want = [];
		for (const p of report.parts)
			for (const s of p.series)
				if (!want.includes(`${p.mode}:${s.name}`))
					want.push(`${p.mode}:${s.name}`);
		const charts = await page.$$eval('#timeline ~ figure.tl', (fs) =>
			fs.map((f) => `${f.dataset.mode}:${f.dataset.series}`));
		check(JSON.stringify(charts) === JSON.stringify(want),
		      `timeline charts ${charts}, series ${want}`);

		log('processes: one row per process of any mode');
		const pids = new Set();
		for (const p of report.parts)
			for (const q of p.processes)
				pids.add(q.pid);
		const rows = await page.$$eval('#processes-table tbody tr', (r) => r.length);
		check(rows === pids.size, `${rows} process rows, ${pids.size} processes in the JSON`);

		const modes = report.parts.map((p) => p.mode);
		const tabs = await page.$$eval('.tabs button', (b) => b.map((x) => x.textContent));
		check(JSON.stringify(tabs) === JSON.stringify(modes),
		      `tabs ${tabs} are not the modes ${modes}`);
		for (let i = 0; i < modes.length; i++) {
			log(`tab ${modes[i]}`);
			await page.click(`#tab-${i}`);
			const shown = await page.$$eval('iframe.part', (fs) =>
				fs.map((f) => f.getBoundingClientRect().height > 100));
			check(shown.filter((x) => x).length === 1 && shown[i],
			      `tab ${modes[i]} does not show its page alone: ${shown}`);
			const part = await partFrame(page, i);
			const title = await part.title();
			check(title.includes(`ebprof ${modes[i]} report`),
			      `tab ${modes[i]} shows "${title}"`);
			await zoom(part, modes[i]);
		}
		if (report.findings.length) {
			log('a finding\'s mode link opens its tab');
			const last = report.findings.length - 1;
			const want = modes.indexOf(report.findings[last].mode);
			await page.click(`ol.findings li:nth-child(${last + 1}) a.tag`);
			check(await page.$eval(`#tab-${want}`, (b) => b.classList.contains('on')),
			      `the link of finding ${last + 1} did not open tab ${want}`);
		}
		await page.click('#tab-0');
		await page.waitForTimeout(200);
		await page.screenshot({ path: shot, fullPage: true });
		check(problems.length === 0, problems.join('\n'));
	} finally {
		await browser.close();
	}
	process.stdout.write('profile-check: all checks passed\n');
}

main().catch((e) => {
	process.stderr.write(`profile-check: FAILED at "${step}": ${e.check ? e.message : e.stack}\n`);
	process.exit(1);
});
