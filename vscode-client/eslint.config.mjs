// Lint for the extension, its unit tests and the end-to-end driver.
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "out/**", "node_modules/**"] },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      eqeqeq: "error",
      curly: "error",
      "no-console": "error",
    },
  },
  {
    // The end-to-end driver is a script: it reports progress on the console.
    files: ["e2e/**"],
    rules: { "no-console": "off" },
  },
);
