/** @module model/activity — the kinds of change the activity log records (verbs/activity). */
export const ACTIVITY_ACTIONS = [
  'remember',
  'ingest',
  'revise',
  'forget',
  'import',
  'upload',
  'reflect',
  'insights_commit',
  'verdicts',
  'workspace_create',
  'workspace_update',
  'workspace_delete',
  'key_create',
  'key_revoke',
] as const;
export type ActivityAction = (typeof ACTIVITY_ACTIONS)[number];
