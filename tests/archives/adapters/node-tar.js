// node-tar.js - tar.x({ file, cwd }) with node-tar's defaults, as npm
// packages that unpack tarballs call it.  Run by ./node-tar with NODE_PATH
// on the pinned install.  Arguments: [--strip-components=N] ARCHIVE DEST.
// Exit status: 0 all extracted, 1 an entry was refused or failed (node-tar
// warns and goes on), 2 the archive broke off, 125 not a tar archive.
'use strict';
const tar = require('tar');

let strip = 0;
const args = process.argv.slice(2);
if (args.length && args[0].startsWith('--strip-components=')) {
	strip = Number(args.shift().split('=')[1]);
}
if (args.length !== 2) {
	process.stderr.write('usage: node-tar [--strip-components=N] ARCHIVE DEST\n');
	process.exit(2);
}
const [file, cwd] = args;

let status = 0;
let notTar = false;
let entries = 0;
tar.x({
	file,
	cwd,
	strip,
	onReadEntry: () => { entries++; },
	onwarn: (code, message) => {
		process.stderr.write(`node-tar: ${code}: ${message}\n`);
		if (code === 'TAR_BAD_ARCHIVE' && entries === 0) notTar = true;
		status = 1;
	},
}).then(() => {
	process.exit(notTar ? 125 : status);
}, (err) => {
	process.stderr.write(`node-tar: ${err.code || ''} ${err.message}\n`);
	// zip, cpio, 7z, ar, and compressions it lacks: refused before the
	// first entry.
	if (err.code === 'TAR_BAD_ARCHIVE' && entries === 0) notTar = true;
	process.exit(notTar ? 125 : 2);
});
