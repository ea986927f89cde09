#!/usr/bin/env node
// Imports a profile into speedscope itself (the app the npm package ships, in Debian's chromium
// through playwright-core) the way a user does, through its file picker, and checks that it
// opened: the welcome page gave way to the profile views (Time Order, Left Heavy, Sandwich), no
// error was shown or logged.
// Saves a screenshot.
//
// Usage: node tests/tools/speedscope-import.js PROFILE SCREENSHOT.png
// Exit status: 0 imported, 1 not imported, 2 usage or no browser.
'use strict';

const path = require('path');
const url = require('url');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

async function main() {
	const [file, shot] = process.argv.slice(2);
	if (!file || !shot) {
		console.error('usage: speedscope-import.js PROFILE SCREENSHOT.png');
		process.exit(2);
	}
	const { chromium } = require('playwright-core');
	const app = path.join(__dirname, 'node_modules/speedscope/dist/release/index.html');
	const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
	const problems = [];
	try {
		const page = await browser.newPage({ viewport: { width: 1200, height: 700 } });
		page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
		page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
		page.on('dialog', (d) => { problems.push(`dialog: ${d.message()}`); d.dismiss(); });
		await page.goto(url.pathToFileURL(app).href);
		await page.setInputFiles('input[type=file]', path.resolve(file));
		const name = path.basename(file);
		await page.waitForFunction(() => !/Welcome to/.test(document.body.innerText) &&
			/Left Heavy/.test(document.body.innerText), null, { timeout: 15000 })
			.catch(() => problems.push('the profile did not open (still on the welcome page)'));
		await page.screenshot({ path: shot });
		if (problems.length) {
			console.error(`speedscope-import: FAILED: ${problems.join('; ')}`);
			process.exit(1);
		}
		console.log(`speedscope-import: ${name} opened`);
	} finally {
		await browser.close();
	}
}

main().catch((e) => { console.error(`speedscope-import: ${e.message}`); process.exit(2); });
