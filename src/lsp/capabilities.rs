//! What Mira tells the client it can do. Only what is implemented is advertised, in a shape
//! the client said it can take.

use super::features::ClientFeatures;
use crate::documents::PositionEncoding;
use crate::lsp::ext::COMMANDS;
use tower_lsp_server::ls_types::*;

pub fn server_capabilities(
    encoding: PositionEncoding,
    client: &ClientFeatures,
) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(encoding.kind()),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(false),
                })),
                ..Default::default()
            },
        )),
        document_symbol_provider: Some(OneOf::Left(true)),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        definition_provider: Some(OneOf::Left(true)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        code_action_provider: Some(code_actions(client)),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: COMMANDS.iter().map(|c| c.to_string()).collect(),
            work_done_progress_options: Default::default(),
        }),
        workspace: Some(WorkspaceServerCapabilities {
            workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                supported: Some(true),
                change_notifications: Some(OneOf::Left(true)),
            }),
            file_operations: None,
        }),
        ..Default::default()
    }
}

/// Options (kinds, resolve) only for clients that take `CodeAction` literals: LSP allows a
/// server the options object only then.
fn code_actions(client: &ClientFeatures) -> CodeActionProviderCapability {
    if !client.code_action_literals {
        return CodeActionProviderCapability::Simple(true);
    }
    CodeActionProviderCapability::Options(CodeActionOptions {
        code_action_kinds: Some(vec![
            CodeActionKind::QUICKFIX,
            CodeActionKind::from(super::actions::MIRA_KIND),
            CodeActionKind::REFACTOR_REWRITE,
        ]),
        work_done_progress_options: Default::default(),
        resolve_provider: Some(true),
    })
}
