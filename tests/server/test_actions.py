"""Code actions: quick fixes that apply and make the finding go away, suppression comments, fix-all."""

from __future__ import annotations

from lsprotocol import types
from lsptools import apply_edits, codes, diagnostics_for, kernel, open_doc, replace_all
from pytest_lsp import LanguageClient


async def actions_at(client: LanguageClient, uri: str, diagnostic: types.Diagnostic, only=None):
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic], only=only),
        )
    )


def edits_of(action: types.CodeAction, uri: str, version: int) -> list[types.TextEdit]:
    """The edits of a versioned workspace edit, checking they were made for `version` of `uri`."""
    (change,) = action.edit.document_changes
    assert change.text_document.uri == uri
    assert change.text_document.version == version
    return list(change.edits)


async def apply_action(client: LanguageClient, name: str, code: str, choose) -> tuple[str, list[str], types.Diagnostic]:
    """Opens kernel `name`, applies the action `choose` picks for its `code` diagnostic and sends the result as
    version 2: the new text, the codes reported for it, and the diagnostic the action was for."""
    text = kernel(name)
    uri = open_doc(client, client.root / name, text)
    diagnostic = next(d for d in await diagnostics_for(client, uri, 1) if d.code == code)
    action = choose(await actions_at(client, uri, diagnostic))
    changed = apply_edits(text, edits_of(action, uri, 1))
    replace_all(client, uri, changed, 2)
    return changed, codes(await diagnostics_for(client, uri, 2)), diagnostic


def preferred_fix(actions: list[types.CodeAction]) -> types.CodeAction:
    return next(a for a in actions if a.kind == types.CodeActionKind.QuickFix and a.is_preferred)


def suppression(actions: list[types.CodeAction]) -> types.CodeAction:
    action = next(a for a in actions if a.title == "Suppress CL101 on this line")
    assert not action.is_preferred
    return action


async def test_bank_conflict_quick_fix_applies_and_the_finding_goes_away(client: LanguageClient):
    fixed, after, conflict = await apply_action(client, "bank_conflict.cu", "CL301", preferred_fix)
    assert conflict.related_information, "the conflict points at the shared array's declaration"
    assert "tile[32][33]" in fixed
    assert "CL301" not in after


async def test_suppression_comment_silences_the_line(client: LanguageClient):
    suppressed, after, store = await apply_action(client, "strided.cu", "CL101", suppression)
    assert suppressed.splitlines()[store.range.start.line].endswith("// cudalens: ignore[CL101]")
    assert "CL101" not in after


async def test_fix_all_offers_only_safe_fixes_as_one_source_action(client: LanguageClient):
    text = kernel("bank_conflict.cu")
    uri = open_doc(client, client.root / "all.cu", text)
    conflict = next(d for d in await diagnostics_for(client, uri, 1) if d.code == "CL301")
    actions = await actions_at(client, uri, conflict, only=[types.CodeActionKind.SourceFixAll])
    assert [a.kind for a in actions] == ["source.fixAll.cudalens"]
    assert "tile[32][33]" in apply_edits(text, edits_of(actions[0], uri, 1))


async def test_no_actions_where_there_is_no_finding(client: LanguageClient):
    uri = open_doc(client, client.root / "copy.cu", kernel("copy.cu"))
    await diagnostics_for(client, uri, 1)
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=types.Range(types.Position(0, 0), types.Position(0, 1)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert not result


async def test_suppression_inside_cuda_embedded_in_python_uses_a_cuda_comment(client: LanguageClient):
    # a `#` inside the CUDA string would become a preprocessor line; the action writes `//` there
    suppressed, after, store = await apply_action(client, "embedded.py", "CL101", suppression)
    assert suppressed.splitlines()[store.range.start.line].endswith("// cudalens: ignore[CL101]")
    assert "CL101" not in after
