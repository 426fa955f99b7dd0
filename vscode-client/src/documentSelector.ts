// The documents the server is given. `cuda-cpp` comes from VS Code's built-in C++ grammar; the pattern catches
// .cu/.cuh opened under another id. C and C++ headers go too: one that holds `__global__`/`__device__` code is
// analysed (it is where its findings land), the server ignores the others. Kept free of `vscode` for plain-Node tests.
export interface FileFilter {
  scheme: "file";
  language?: string;
  pattern?: string;
}

export const CUDA_PATTERN = "**/*.{cu,cuh}";
export const HEADER_PATTERN = "**/*.{h,hpp,hh,inl}";

export const DOCUMENT_SELECTOR: FileFilter[] = [
  { scheme: "file", language: "cuda-cpp" },
  { scheme: "file", language: "python" },
  { scheme: "file", pattern: CUDA_PATTERN },
  { scheme: "file", language: "c", pattern: HEADER_PATTERN },
  { scheme: "file", language: "cpp", pattern: HEADER_PATTERN },
];
