// A Coder proposal as the server's `cudalens/showProposal` request sends it, and the client capability that asks
// the server for it. Kept free of `vscode` for plain-Node tests; proposalDiff.ts shows it.

export const SHOW_PROPOSAL_REQUEST = "cudalens/showProposal";
// The scheme of the read-only virtual documents that hold proposals (one per proposal id).
export const PROPOSAL_SCHEME = "cudalens-proposal";

export interface Proposal {
  uri: string; // the document the proposal is for
  id: string; // the proposal's id (`cudalens.applyOptimization` takes it)
  text: string; // the whole document as the proposal would leave it
  title: string;
}

export function parseProposal(params: unknown): Proposal | undefined {
  if (params === null || typeof params !== "object") {
    return undefined;
  }
  const p = params as Record<string, unknown>;
  const { uri, id, text, title } = p;
  if (typeof uri !== "string" || typeof id !== "string" || typeof text !== "string" || id === "") {
    return undefined;
  }
  return { uri, id, text, title: typeof title === "string" && title !== "" ? title : "Coder's proposal" };
}

// `experimental.cudalens.showProposal: true` added to the client capabilities (the server asks only then; other
// editors get a `.diff` file instead).
export function withProposalCapability(experimental: unknown): Record<string, unknown> {
  const base = experimental !== null && typeof experimental === "object" ? (experimental as Record<string, unknown>) : {};
  const ours = base.cudalens !== null && typeof base.cudalens === "object" ? (base.cudalens as Record<string, unknown>) : {};
  return { ...base, cudalens: { ...ours, showProposal: true } };
}
