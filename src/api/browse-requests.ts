/**
 * @module api/browse-requests — the queries and bodies of the browsing routes (http/routes-browse:
 * the dashboard's reads), as TypeBox schemas: the timeline, entity summaries, the graph overview,
 * the contradictions list, the activity log and the metrics history.
 */
import { Type as T } from '@sinclair/typebox';
import { RANGES } from '../model/limits.ts';
import { EdgeTypes, Name } from './fields.ts';
import { Time } from './time.ts';
import { ACTIVITY_ACTIONS } from '../model/activity.ts';
import { FilterText, Kind, ListMatch } from './requests.ts';

/** GET /v1/memories/timeline: the list's criteria, counted per hour or day. */
export const TimelineQuery = T.Object({
  filter: T.Optional(FilterText),
  entity_id: T.Optional(Name()),
  speaker: T.Optional(Name('Only memories said by this speaker')),
  conversation_id: T.Optional(Name("Only this conversation's turns")),
  kind: T.Optional(Kind),
  include_superseded: T.Optional(T.Boolean()),
  ...ListMatch,
  bucket: T.Optional(
    T.Union([T.Literal('hour'), T.Literal('day')], { description: 'Bucket width (default day)' }),
  ),
  utc_offset_min: T.Optional(
    T.Integer({
      minimum: RANGES.utcOffsetMin[0],
      maximum: RANGES.utcOffsetMin[1],
      description:
        "Minutes east of UTC of the reader's clock, so that days start at local midnight (default 0)",
    }),
  ),
});

export const EntitySummaryQuery = T.Object({
  q: T.Optional(
    T.String({
      maxLength: 256,
      description: 'Only entity ids containing this text (case-insensitive)',
    }),
  ),
  sort: T.Optional(
    T.Union([T.Literal('recent'), T.Literal('memories'), T.Literal('name')], {
      description: 'recent (default: latest activity first), memories (most first) or name',
    }),
  ),
  limit: T.Optional(
    T.Integer({ minimum: 1, description: 'Entities (default 100; above 1000 counts as 1000)' }),
  ),
});

export const GraphOverviewBody = T.Object({
  entity_id: T.Optional(
    Name("An entity's memories and their direct neighbours, instead of the whole workspace"),
  ),
  kind: T.Optional(Kind),
  max_nodes: T.Optional(
    T.Integer({
      minimum: 1,
      description:
        'At most this many memories (default 100; above 500 counts as 500), the most important first',
    }),
  ),
  edge_types: T.Optional(EdgeTypes),
});

export const ContradictionsQuery = T.Object({
  entity_id: T.Optional(Name('Only pairs with at least one memory about this entity')),
  limit: T.Optional(
    T.Integer({
      minimum: 1,
      description:
        'At most this many confirmed pairs and this many candidates (default 50; above 500 counts as 500)',
    }),
  ),
});

export const ActivityQuery = T.Object({
  workspace: T.Optional(T.String({ description: 'Only changes in this workspace' })),
  action: T.Optional(
    T.Union(
      ACTIVITY_ACTIONS.map((a) => T.Literal(a)),
      { description: 'Only this kind of change' },
    ),
  ),
  key_id: T.Optional(T.String({ description: 'Only changes made with this key' })),
  cursor: T.Optional(
    T.String({
      pattern: '^[0-9]{1,15}$',
      description: 'next_cursor of the previous page (older entries)',
    }),
  ),
  limit: T.Optional(
    T.Integer({
      minimum: 1,
      description: 'Entries per page (default 50; above 500 counts as 500)',
    }),
  ),
});

export const MetricsHistoryQuery = T.Object({
  since_us: T.Optional(Time('Only points starting at or after this time')),
});
