#!/usr/bin/env node
// Opens an ebprof flame graph SVG on its own in a real browser (Debian's chromium through
// playwright-core) and uses it: click a frame to zoom, reset, search through the Search button's
// prompt, check the matched share and the highlight. Fails on any console error, page error or
// network request, then saves a screenshot.
//
// Usage: node tests/tools/svg-check.js FLAME.svg SCREENSHOT.png
// Exit status: 0 all checks passed, 1 a check failed, 2 usage or no browser.
'use strict';

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

async function main() {
	const [svg, shot] = process.argv.slice(2);
	if (!svg || !shot) {
		console.error('usage: svg-check.js FLAME.svg SCREENSHOT.png');
		process.exit(2);
	}
	let chromium;
	try {
		({ chromium } = require('playwright-core'));
	} catch (e) {
		console.error('svg-check: playwright-core is not installed (scripts/install-deps.sh)');
		process.exit(2);
	}
	const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
	const problems = [];
	try {
		const page = await browser.newPage({ viewport: { width: 1300, height: 800 } });
		page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
		page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
		page.on('request', (r) => {
			if (!r.url().startsWith('file:'))
				problems.push(`network request: ${r.url()}`);
		});
		await page.goto(url.pathToFileURL(path.resolve(svg)).href);
		await page.waitForSelector('#frames > g');

		// zoom: the widest frame that is not full width grows to the full width
		const target = await page.evaluate(() => {
			const gs = [...document.querySelectorAll('#frames > g')];
			let best = -1, bestW = 0;
			gs.forEach((g, i) => {
				const w = parseFloat(g.querySelector('rect').getAttribute('width'));
				if (w > 20 && w < 900 && w > bestW) { best = i; bestW = w; }
			});
			const name = best >= 0 ?
				gs[best].querySelector('title').textContent.split('\n')[0] : '';
			return { index: best, width: bestW, name: name };
		});
		check(target.index >= 0, 'no frame narrower than the graph to zoom into');
		await (await page.$$('#frames > g'))[target.index].click();
		const after = await page.evaluate((i) => parseFloat(document
			.querySelectorAll('#frames > g')[i].querySelector('rect').getAttribute('width')),
			target.index);
		check(after > target.width + 1, `zoom did not widen the frame: ${target.width} -> ${after}`);
		console.log(`svg-check: zoom ${target.name}: ${target.width.toFixed(1)} -> ${after.toFixed(1)} px`);
		await page.click('#unzoom');
		const reset = await page.evaluate((i) => parseFloat(document
			.querySelectorAll('#frames > g')[i].querySelector('rect').getAttribute('width')),
			target.index);
		check(Math.abs(reset - target.width) < 0.5, `Reset Zoom did not restore: ${reset}`);

		// search through the prompt the Search button opens
		const term = target.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
		page.once('dialog', (d) => d.accept(term));
		await page.click('#search');
		await page.waitForFunction(() => /Matched/.test(document.getElementById('matched').textContent));
		const matched = await page.$eval('#matched', (m) => m.textContent);
		const lit = await page.$$eval('#frames rect[fill="#e600e6"]', (r) => r.length);
		console.log(`svg-check: search /${term}/: ${matched}, ${lit} frames highlighted`);
		check(lit > 0, 'the search highlighted no frame');
		check(!/Matched: 0\.0%/.test(matched), 'the search matched nothing');

		await page.screenshot({ path: shot });
		check(problems.length === 0, problems.join('; '));
	} finally {
		await browser.close();
	}
}

main().then(() => console.log('svg-check: ok'), (e) => {
	console.error(`svg-check: ${e.check ? 'FAILED: ' : ''}${e.message}`);
	process.exit(e.check ? 1 : 2);
});
