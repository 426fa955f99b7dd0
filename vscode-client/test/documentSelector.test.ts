// Which documents reach the server: CUDA sources and headers, Python, and C/C++ headers (the server keeps those
// that hold device code) — not C/C++ sources, and nothing that is not a file.
import assert from "node:assert/strict";
import * as path from "node:path";
import { describe, it } from "node:test";
import { DOCUMENT_SELECTOR, type FileFilter } from "../src/documentSelector";

// VS Code's rule for a filter: every field it names matches. The patterns here are all `**/*.{ext,…}`.
function matches(filter: FileFilter, scheme: string, language: string, file: string): boolean {
  if (filter.scheme !== scheme || (filter.language !== undefined && filter.language !== language)) {
    return false;
  }
  if (filter.pattern === undefined) {
    return true;
  }
  const braces = /^\*\*\/\*\.\{([\w,]+)\}$/.exec(filter.pattern);
  assert.ok(braces, `a pattern this test cannot read: ${filter.pattern}`);
  return braces[1].split(",").includes(path.extname(file).slice(1));
}

const served = (language: string, file: string, scheme = "file"): boolean =>
  DOCUMENT_SELECTOR.some((f) => matches(f, scheme, language, file));

describe("DOCUMENT_SELECTOR", () => {
  it("gives the server C and C++ headers under every language VS Code opens them with", () => {
    for (const ext of ["h", "hpp", "hh", "inl"]) {
      for (const language of ["c", "cpp", "cuda-cpp"]) {
        assert.ok(served(language, `/w/include/kernels.${ext}`), `${language} .${ext}`);
      }
    }
  });

  it("gives it CUDA sources and Python, whatever their language id", () => {
    assert.ok(served("cuda-cpp", "/w/k.cu") && served("cpp", "/w/k.cu") && served("plaintext", "/w/k.cuh"));
    assert.ok(served("python", "/w/model.py"));
  });

  it("keeps C and C++ sources, and documents that are not files, to themselves", () => {
    assert.ok(!served("cpp", "/w/main.cpp") && !served("c", "/w/main.c") && !served("cpp", "/w/x.cc"));
    assert.ok(!served("cpp", "/w/k.h", "untitled") && !served("python", "/w/model.py", "git"));
  });
});
