/**
 * @module pages/entities — the entities of a workspace (memory counts, kinds, first and last
 * activity; filter and sort), and one entity's page: its memories over time (the timeline and
 * list of pages/browse), its insights, its contradictions and its neighbourhood in the graph.
 */
import { useEffect, useState } from 'preact/hooks';
import type { EntitySummariesQuery } from '../../../clients/typescript/src/index.ts';
import { ApiPanel } from '../api-panel.tsx';
import { ago, num, plural, when } from '../format.ts';
import { SvgGraph } from '../graph/svg-graph.tsx';
import { href, hrefQuery, navigate, setQuery, type Location } from '../router.ts';
import type { Session } from '../session.ts';
import { ErrorBanner, MemorySummary, Notice, useAsync } from '../ui.tsx';
import { listCall, MemoryBrowser } from './browse.tsx';
import { ContradictionList } from './insights.tsx';

type Sort = NonNullable<EntitySummariesQuery['sort']>;
const COLUMNS: ReadonlyArray<[Sort | null, string]> = [
  ['name', 'Entity'],
  ['memories', 'Memories'],
  [null, 'Kinds'],
  [null, 'First'],
  ['recent', 'Last activity'],
];

export function EntitiesPage({ session, loc }: { session: Session; loc: Location }) {
  const sort = (loc.query.get('sort') as Sort | null) ?? 'recent';
  const [text, setText] = useState(loc.query.get('q') ?? '');
  useEffect(() => {
    const timer = setTimeout(
      () => text !== (loc.query.get('q') ?? '') && setQuery(loc, { q: text }),
      300,
    );
    return () => clearTimeout(timer);
  }, [text]);
  const q = loc.query.get('q') ?? '';
  const query: EntitySummariesQuery = { sort, limit: 500, ...(q === '' ? {} : { q }) };
  const data = useAsync(() => session.client.entitySummaries(query), [session, sort, q]);
  return (
    <>
      <h1>
        Entities <span class="sub">in {session.workspace}</span>
      </h1>
      <form
        class="row filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery(loc, { q: text });
        }}
      >
        <label class="grow">
          Find{' '}
          <input
            id="entity-filter"
            type="search"
            value={text}
            placeholder="part of an entity id"
            onInput={(e) => setText(e.currentTarget.value)}
          />
        </label>
      </form>
      <ErrorBanner error={data.error} />
      <p role="status" id="entity-count">
        {data.data
          ? `${plural(data.data.total, 'entity', 'entities')}${data.data.total > data.data.entities.length ? `, the first ${data.data.entities.length} shown` : ''}`
          : 'Loading…'}
      </p>
      {data.data?.total === 0 && (
        <Notice>No entities{q === '' ? ' yet: memories get one with entity_id' : ' match'}.</Notice>
      )}
      {data.data && data.data.entities.length > 0 && (
        <table id="entities-table">
          <thead>
            <tr>
              {COLUMNS.map(([key, label]) => (
                <th
                  key={label}
                  aria-sort={
                    key === sort ? (key === 'name' ? 'ascending' : 'descending') : undefined
                  }
                >
                  {key === null ? (
                    label
                  ) : (
                    <button
                      type="button"
                      class="th"
                      onClick={() => setQuery(loc, { sort: key === 'recent' ? undefined : key })}
                    >
                      {label}
                      {key === sort ? (key === 'name' ? ' ▲' : ' ▼') : ''}
                    </button>
                  )}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {data.data.entities.map((e) => (
              <tr key={e.entity_id}>
                <td>
                  <a href={href('entities', e.entity_id)}>{e.entity_id}</a>
                </td>
                <td class="num">{e.memory_count}</td>
                <td>
                  {Object.entries(e.kinds).map(([k, n]) => (
                    <span key={k} class={`badge kind-${k}`}>
                      {k} {n}
                    </span>
                  ))}
                </td>
                <td title={when(e.first_at)}>{ago(e.first_at)}</td>
                <td title={when(e.last_at)}>{ago(e.last_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ApiPanel
        session={session}
        call={{ op: 'entity_summaries', query: { ...query } }}
        what="this list"
      />
    </>
  );
}

export function EntityPage({
  session,
  entity,
  loc,
}: {
  session: Session;
  entity: string;
  loc: Location;
}) {
  const summary = useAsync(
    async () =>
      (await session.client.entitySummaries({ q: entity, limit: 1000 })).entities.find(
        (e) => e.entity_id === entity,
      ) ?? null,
    [session, entity],
  );
  const insights = useAsync(
    () => session.client.insights({ entity_id: entity, max_results: 20 }),
    [session, entity],
  );
  const contradictions = useAsync(
    () => session.client.contradictions({ entity_id: entity, limit: 20 }),
    [session, entity],
  );
  const graph = useAsync(
    () => session.client.graphOverview({ entity_id: entity, max_nodes: 60 }),
    [session, entity],
  );
  const s = summary.data;
  return (
    <>
      <p>
        <a href={href('entities')}>← Entities</a>
      </p>
      <h1>
        Entity <code>{entity}</code>
      </h1>
      <ErrorBanner error={summary.error} />
      {summary.data === null && <Notice>No live memory is about {entity}.</Notice>}
      {s && (
        <div class="tiles" id="entity-tiles">
          <div class="tile">
            <div class="tile-value">{s.memory_count}</div>
            <div class="tile-label">memories</div>
          </div>
          <div class="tile">
            <div class="tile-value">
              {Object.entries(s.kinds)
                .map(([k, n]) => `${n} ${k}`)
                .join(' · ')}
            </div>
            <div class="tile-label">by kind</div>
          </div>
          <div class="tile">
            <div class="tile-value" title={when(s.first_at)}>
              {ago(s.first_at)}
            </div>
            <div class="tile-label">first memory</div>
          </div>
          <div class="tile">
            <div class="tile-value" title={when(s.last_at)}>
              {ago(s.last_at)}
            </div>
            <div class="tile-label">last activity</div>
          </div>
        </div>
      )}
      <MemoryBrowser session={session} loc={loc} fixedEntity={entity} />
      <section aria-labelledby="entity-insights-h">
        <h2 id="entity-insights-h">Insights ({insights.data?.length ?? '…'})</h2>
        <ErrorBanner error={insights.error} />
        {insights.data?.length === 0 && <Notice>No insights about {entity} yet.</Notice>}
        {insights.data?.map((m) => (
          <MemorySummary key={m.memory_id} memory={m}>
            <div class="scores">
              {m.source_memory_ids?.length ?? 0} sources
              {typeof m.context['confidence'] === 'number'
                ? ` · confidence ${num(m.context['confidence'], 2)}`
                : ''}
            </div>
          </MemorySummary>
        ))}
      </section>
      <section aria-labelledby="entity-contra-h">
        <h2 id="entity-contra-h">Contradictions</h2>
        <ErrorBanner error={contradictions.error} />
        {contradictions.data && (
          <ContradictionList
            data={contradictions.data}
            session={session}
            onDecided={contradictions.reload}
          />
        )}
      </section>
      <section aria-labelledby="entity-graph-h">
        <h2 id="entity-graph-h">In the graph</h2>
        <ErrorBanner error={graph.error} />
        {graph.data && graph.data.nodes.length > 0 && (
          <>
            <p class="sub" id="entity-graph-status">
              Showing {graph.data.nodes.length} of{' '}
              {plural(graph.data.total_nodes, 'memory', 'memories')}: {entity}'s and their
              neighbours. <a href={hrefQuery(['graph'], { entity })}>Open in the graph</a>
            </p>
            <SvgGraph
              nodes={graph.data.nodes}
              edges={graph.data.edges}
              groupOf={(m) => m.entity_id}
              onPick={(id) => navigate(href('memories', id))}
              label={`The graph around ${entity}`}
              labelled={15}
            />
          </>
        )}
        {graph.data?.nodes.length === 0 && <Notice>Nothing to draw.</Notice>}
      </section>
      <ApiPanel session={session} call={listCall(loc, entity)} what={`${entity}'s memories`} />
    </>
  );
}
