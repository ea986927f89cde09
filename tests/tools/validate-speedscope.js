#!/usr/bin/env node
// Validate speedscope files against the JSON schema that the speedscope package itself ships
// (so the check follows the viewer's version, not our reading of its docs), then check what the
// schema cannot say but speedscope's importer relies on: frame indices that exist, one weight
// per sample, no negative weights, an activeProfileIndex that names a profile.
//
// Usage: node tests/tools/validate-speedscope.js FILE...
// Exit 0 when every file is valid; 1 with the errors on stderr; 2 for a usage or setup error.
// Needs `npm ci --prefix tests/tools` (ajv and speedscope, see package.json).
'use strict';

const fs = require('fs');
const path = require('path');

function load(what, fn) {
	try {
		return fn();
	} catch (e) {
		process.stderr.write(`validate-speedscope: cannot load ${what}: ${e.message}\n` +
			'validate-speedscope: run `npm ci --prefix tests/tools` ' +
			'(scripts/install-deps.sh does)\n');
		process.exit(2);
	}
}

const Ajv = load('ajv', () => require('ajv'));
const schemaPath = load('the speedscope package', () =>
	path.join(path.dirname(require.resolve('speedscope/package.json')),
		'dist', 'release', 'file-format-schema.json'));
const schema = load(schemaPath, () => JSON.parse(fs.readFileSync(schemaPath, 'utf8')));

// draft-07, which ajv 8 speaks by default; strict, so a schema ajv would misread fails loudly
const ajv = new Ajv({ allErrors: true });
const validate = load('the schema', () => ajv.compile(schema));

function consistency(doc) {
	const errors = [];
	const nframes = doc.shared.frames.length;

	doc.profiles.forEach((p, i) => {
		const where = `/profiles/${i} (${JSON.stringify(p.name)})`;

		if (p.endValue < p.startValue)
			errors.push(`${where}: endValue ${p.endValue} < ` +
				`startValue ${p.startValue}`);
		if (p.type !== 'sampled')
			return;
		if (p.samples.length !== p.weights.length)
			errors.push(`${where}: ${p.samples.length} samples but ` +
				`${p.weights.length} weights`);
		p.samples.forEach((stack, j) => {
			stack.forEach((f) => {
				if (!Number.isInteger(f) || f < 0 || f >= nframes)
					errors.push(`${where}/samples/${j}: frame ${f} is not ` +
						`an index into shared.frames (${nframes} frames)`);
			});
		});
		p.weights.forEach((w, j) => {
			if (w < 0)
				errors.push(`${where}/weights/${j}: negative weight ${w}`);
		});
	});
	if ('activeProfileIndex' in doc &&
	    !(Number.isInteger(doc.activeProfileIndex) && doc.activeProfileIndex >= 0 &&
	      doc.activeProfileIndex < doc.profiles.length))
		errors.push(`/activeProfileIndex: ${doc.activeProfileIndex} names no profile ` +
			`(${doc.profiles.length} profiles)`);
	return errors;
}

const files = process.argv.slice(2);
if (!files.length) {
	process.stderr.write('usage: validate-speedscope.js FILE...\n');
	process.exit(2);
}

let bad = 0;
for (const file of files) {
	let doc;

	try {
		doc = JSON.parse(fs.readFileSync(file, 'utf8'));
	} catch (e) {
		process.stderr.write(`${file}: not JSON: ${e.message}\n`);
		bad++;
		continue;
	}
	if (!validate(doc)) {
		for (const e of validate.errors)
			process.stderr.write(`${file}: ${e.instancePath || '/'} ${e.message}` +
				`${e.params ? ' ' + JSON.stringify(e.params) : ''}\n`);
		bad++;
		continue;
	}
	const errors = consistency(doc);
	for (const e of errors)
		process.stderr.write(`${file}: ${e}\n`);
	if (errors.length) {
		bad++;
		continue;
	}
	process.stdout.write(`${file}: valid speedscope file (schema of speedscope ` +
		`${require('speedscope/package.json').version})\n`);
}
process.exit(bad ? 1 : 0);
