import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isGone, standingOf, type KeyRecord } from '../../../lib/access/index.ts';
import {
  ANALYZER_PLANS, CsvInputError, InputCollector, MAX_ANALYSIS_ROWS, SHIPMENT_CSV_HEADER, ShareLinks,
  analysisSummary, analysisView, readCsv, sharePage, shipmentCsvLine,
  type Analyzer, type InputContext, type RejectedRow,
} from '../../../lib/analyzer/index.ts';
import type { ApiDeps } from '../context/deps.ts';
import { NOT_JSON, deferJsonErrors } from '../http/bodies.ts';
import { ApiError, methodNotAllowed } from '../http/errors.ts';
import { managementKey } from '../auth/management-key.ts';
import { api, type RouteSpec } from '../openapi/spec.ts';
import { publicBaseOf } from '../context/public-base.ts';
import { z } from 'zod';
import {
  AnalysisAcceptedSchema, AnalysisListSchema, AnalysisRequestSchema, AnalysisSchema, SHIPMENT_CSV_COLUMNS, ShareLinkSchema,
} from '../../../lib/analyzer/index.ts';

/** What these routes use of the API's dependencies. */
type AnalysisDeps = Pick<ApiDeps, 'access' | 'clock' | 'product' | 'publicBaseUrl'>;

const tags = ['Shipment analyzer'];
/** An analyzer call: a key checked as a management call (burst limit), growth and business plans only. */
const analyzerCall = (spec: Omit<RouteSpec, 'caller' | 'limits' | 'tags'>) => api({
  ...spec, caller: 'key', limits: 'burst', tags, errors: ['plan_feature_unavailable', ...spec.errors],
});
const IdParams = z.object({ id: z.string().describe('an_…') });
const CSV_EXAMPLE = 'awb,carrier,order_id,payment_mode,promised_by\n1234567890104,delhivery,ORD-1,cod,2026-11-28\n12345670104,bluedart,ORD-2,prepaid,\n';

/** A JSON body of 20,000 shipments with every field fits easily; CSV is streamed under the same cap. */
export const ANALYSIS_BODY_LIMIT = 16 * 1024 * 1024;

/**
 * The key of an analyzer call: checked as a management call (no lookup consumed, the burst limit
 * counted per request), refused when it may not act now as every /v1/ call is, then the plan: growth and
 * business only (403 `plan_feature_unavailable`, nothing counted).
 */
async function analyzerKey(deps: AnalysisDeps, analyzer: Analyzer, request: FastifyRequest, reply: FastifyReply): Promise<KeyRecord> {
  // managementKey refuses a key that may not act now (auth.ts acceptKeyRecord: 401, 402).
  const record = await managementKey(deps, analyzer.store.kv, request, reply);
  if (!analyzer.includes(record)) {
    throw new ApiError('plan_feature_unavailable', `The shipment analyzer is part of the ${ANALYZER_PLANS.join(' and ')} plans; `
      + `this key is on the ${record.plan} plan. Renew with one of them to use it.`);
  }
  return record;
}

function problems(rejected: readonly RejectedRow[]): string {
  return rejected.slice(0, 5).map((r) => `row ${r.row}${r.awb ? ` (${r.awb})` : ''}: ${r.code}`).join('; ');
}

const tooMany = () => new ApiError(
  'payload_too_large',
  `An analysis holds at most ${MAX_ANALYSIS_ROWS.toLocaleString('en-US')} shipments; split the file and send it as several analyses.`,
);

function collectJson(collector: InputCollector, body: unknown): { name: string | null } {
  if (body === NOT_JSON || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError(
      'invalid_analysis',
      'The body must be JSON {"name"?: "...", "shipments": [{"awb": "...", "carrier"?: "...", ...}]} or a CSV with Content-Type: text/csv.',
    );
  }
  const { name, shipments } = body as { name?: unknown; shipments?: unknown };
  if (name !== undefined && name !== null && (typeof name !== 'string' || name.length > 200)) {
    throw new ApiError('invalid_analysis', '"name" must be a string of at most 200 characters.');
  }
  if (!Array.isArray(shipments) || shipments.length === 0) {
    throw new ApiError('invalid_analysis', '"shipments" must be a list of 1 to 20,000 shipments {"awb": "...", ...}.');
  }
  if (shipments.length > MAX_ANALYSIS_ROWS) throw tooMany();
  for (const item of shipments) {
    collector.add(item !== null && typeof item === 'object' && !Array.isArray(item) ? item as Record<string, unknown> : { awb: undefined, order_id: {} });
  }
  return { name: typeof name === 'string' && name.trim() ? name.trim() : null };
}

/**
 * Reads a CSV body into the collector. Refused before its end (past 20,000 rows or 16 MiB, a
 * header or line too long), the rest of the body is left unread: the answer closes the connection,
 * as Fastify's own 413 does, so the next request on it is never parsed out of the upload's bytes
 * (or left waiting for them: issue 29).
 */
async function collectCsv(collector: InputCollector, body: Readable): Promise<void> {
  try {
    const outcome = await readCsv(body, {
      header: (columns) => {
        if (!columns.includes('awb')) {
          throw new CsvInputError(`The CSV has no awb column (its header row names: ${columns.slice(0, 10).join(', ') || 'nothing'}).`);
        }
      },
      row: (record) => collector.add(record),
    }, ANALYSIS_BODY_LIMIT);
    if (outcome !== 'done') throw tooMany();
  } catch (err) {
    const apiError = err instanceof CsvInputError ? new ApiError('invalid_analysis', err.message) : err;
    if (!(apiError instanceof ApiError) || body.readableEnded) throw apiError;
    throw new ApiError(apiError.code, apiError.message, { ...apiError.headers, Connection: 'close' });
  }
}

/** The shipment analyzer's routes (contracts.md "Shipment analyzer"). */
export function registerAnalysisRoutes(app: FastifyInstance, deps: AnalysisDeps, analyzer: Analyzer): void {
  const ctx: InputContext = { resolveCarrier: (name) => deps.product.registry.resolve(name), detector: deps.product.detector };

  const create = async (request: FastifyRequest<{ Querystring: { name?: string } }>, reply: FastifyReply) => {
    const record = await analyzerKey(deps, analyzer, request, reply);
    const collector = new InputCollector(ctx);
    let name: string | null;
    if (request.body instanceof Readable) {
      await collectCsv(collector, request.body);
      const q = request.query.name;
      name = typeof q === 'string' && q.trim() ? q.trim().slice(0, 200) : null;
    } else {
      ({ name } = collectJson(collector, request.body));
    }
    if (collector.shipments.length === 0) {
      throw new ApiError('invalid_analysis', collector.rows === 0 ? 'The analysis has no shipments.' : `No valid shipment: ${problems(collector.rejected)}.`);
    }
    const accepted = await analyzer.accept(record, name, collector.shipments, collector.rejected, collector.rejectedCount);
    if (!accepted.ok) {
      throw new ApiError('analyzer_quota_exceeded', `This analysis needs ${accepted.needed} shipments of the analyzer allowance and `
        + `${accepted.remaining} of ${accepted.limit} remain in this period. Send fewer shipments, or renew to start a new period.`);
    }
    const doc = accepted.doc;
    return reply.code(202).header('Location', `/v1/analyses/${doc.id}`).send({
      id: doc.id, status: 'queued', shipments: doc.total, created_at: new Date(doc.created_ms).toISOString(), rejected_rows: doc.rejected_rows,
    });
  };

  const own = async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const record = await analyzerKey(deps, analyzer, request, reply);
    const id = request.params.id;
    const doc = /^an_[A-Za-z0-9]{1,40}$/.test(id) ? await analyzer.store.get(record.prefix, id) : null;
    // Another key's analysis is looked up under this key's prefix: it is simply not there.
    if (!doc) throw new ApiError('analysis_not_found', `No analysis ${id} of this key.`);
    return doc;
  };

  app.register(async (scope) => {
    deferJsonErrors(scope, { bodyLimit: ANALYSIS_BODY_LIMIT });
    // CSV is read as a stream by the handler, after the key checks (readCsv caps its size).
    scope.addContentTypeParser(['text/csv', 'application/csv'], (_request, payload, done) => done(null, payload));
    scope.post('/v1/analyses', {
      bodyLimit: ANALYSIS_BODY_LIMIT,
      ...analyzerCall({
        operationId: 'createAnalysis', summary: 'Analyse your shipments (growth and business plans)',
        description: 'JSON, or `Content-Type: text/csv` with a header row naming the same columns (awb required; any order; '
          + 'UTF-8 with or without BOM; comma or semicolon; quoted fields; `?name=` names it). 1 to 20,000 rows. '
          + 'Each distinct carrier + AWB counts once against the analyzer allowance of the period (growth 4,000, business 12,000), '
          + 'atomically when accepted; carrier errors are given back when it completes. '
          + 'No lookup is consumed and the daily quota does not apply. Bad rows are listed in `rejected_rows` and count nothing.',
        query: z.object({ name: z.string().max(200).optional().describe('Name of a CSV analysis') }),
        body: AnalysisRequestSchema,
        bodyExample: { name: 'November', shipments: [{ awb: '1234567890104', carrier: 'delhivery', payment_mode: 'cod', promised_by: '2026-11-28' }] },
        textBody: { contentType: 'text/csv', description: 'A header row naming the columns, then one shipment a row', example: CSV_EXAMPLE },
        responses: { 202: { description: 'Accepted and queued; `Location` names it', schema: AnalysisAcceptedSchema, headers: ['Location'] } },
        errors: ['invalid_analysis', 'analyzer_quota_exceeded'],
      }),
    }, create);
  });

  app.get<{ Querystring: { cursor?: string; limit?: string } }>('/v1/analyses', analyzerCall({
    operationId: 'listAnalyses', summary: 'The key\'s analyses, newest first (cursor-paged)',
    query: z.object({ cursor: z.string().optional(), limit: z.int().min(1).max(100).default(20).optional() }),
    responses: { 200: { description: 'Analyses without their reports', schema: AnalysisListSchema } },
    errors: ['bad_request'],
  }), async (request, reply) => {
    const record = await analyzerKey(deps, analyzer, request, reply);
    const limit = request.query.limit === undefined ? 20 : Number(request.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new ApiError('bad_request', 'limit must be an integer from 1 to 100.');
    const { docs, next } = await analyzer.store.list(record.prefix, request.query.cursor ?? null, limit);
    return { analyses: docs.map(analysisSummary), next_cursor: next };
  });

  app.get<{ Params: { id: string } }>('/v1/analyses/:id', analyzerCall({
    operationId: 'getAnalysis', summary: 'One analysis: status, progress and (once completed) the report', params: IdParams,
    responses: { 200: { description: 'The analysis', schema: AnalysisSchema } },
    errors: ['analysis_not_found'],
  }), async (request, reply) => analysisView(await own(request, reply)));

  app.get<{ Params: { id: string } }>('/v1/analyses/:id/shipments', analyzerCall({
    operationId: 'getAnalysisShipments', summary: 'One CSV row per shipment of a completed analysis', params: IdParams,
    responses: {
      200: {
        description: `text/csv with the columns ${SHIPMENT_CSV_COLUMNS.join(', ')} (ndr_reasons ;-separated)`,
        text: 'text/csv', headers: ['Content-Disposition'],
      },
    },
    errors: ['analysis_not_found', 'conflict'],
  }), async (request, reply) => {
    const doc = await own(request, reply);
    if (doc.status !== 'completed') {
      throw new ApiError('conflict', `Analysis ${doc.id} is ${doc.status} (${doc.done} of ${doc.total}); its shipments are listed once it completes.`);
    }
    const store = analyzer.store;
    async function* lines() {
      yield SHIPMENT_CSV_HEADER;
      for await (const s of store.shipments(doc)) yield shipmentCsvLine(s);
    }
    return reply
      .type('text/csv; charset=utf-8')
      .header('Content-Disposition', `attachment; filename="${doc.id}-shipments.csv"`)
      .send(Readable.from(lines()));
  });

  // Share links (lib/analyzer share.ts): opaque tokens kept in the state store, revocable, served
  // only while the sharing key is in good standing, and built on PUBLIC_BASE_URL, never on Host.
  const shares = new ShareLinks(analyzer.store.kv);

  app.post<{ Params: { id: string } }>('/v1/analyses/:id/share', analyzerCall({
    operationId: 'shareAnalysis', summary: 'A link (30 days) to an HTML report with charts, for colleagues without API access', params: IdParams,
    description: 'The link carries an opaque token: it names neither the key nor the analysis. '
      + 'It stops working when it expires, when the analysis\'s links are revoked (`DELETE` on this path), '
      + 'and while the key is suspended or once it is revoked. Its address starts with the service\'s `PUBLIC_BASE_URL`.',
    responses: { 200: { description: 'The link', schema: ShareLinkSchema } },
    errors: ['analysis_not_found'],
  }), async (request, reply) => {
    const doc = await own(request, reply);
    const { token, expiresMs } = await shares.create(doc.key_prefix, doc.id, deps.clock());
    return { url: `${publicBaseOf(deps, request.server)}/shared/analyses/${token}`, expires_at: new Date(expiresMs).toISOString() };
  });

  app.delete<{ Params: { id: string } }>('/v1/analyses/:id/share', analyzerCall({
    operationId: 'revokeAnalysisShares', summary: 'Revoke every share link made so far to the analysis', params: IdParams,
    description: 'Every link made before this call stops working at once, on every instance; '
      + 'a link made afterwards works. Answered 204 also when there were none.',
    responses: { 204: { description: 'Revoked' } },
    errors: ['analysis_not_found'],
  }), async (request, reply) => {
    const doc = await own(request, reply);
    await shares.revokeAll(doc.key_prefix, doc.id);
    return reply.code(204).send();
  });

  // The shared report: no API key; the token is the permission, and the key must still stand.
  app.get<{ Params: { token: string } }>('/shared/analyses/:token', api({
    operationId: 'sharedAnalysisPage', summary: 'The shared report page (no API key: the link\'s token is the permission)', caller: 'none', tags,
    params: z.object({ token: z.string() }),
    responses: {
      200: { description: 'HTML with server-rendered SVG charts; nothing loaded from another host', text: 'text/html', headers: ['Cache-Control'] },
    },
    errors: ['analysis_not_found'],
  }), async (request, reply) => {
    const now = deps.clock();
    const shared = await shares.resolve(request.params.token, now);
    // Revoked or suspended keys' links are dead (a resumed key's come back); a lapsed period
    // does not hide a report already made, as /v1/usage still answers then.
    const standing = shared ? standingOf(await deps.access.getByPrefix(shared.prefix), new Date(now)) : 'unknown';
    const doc = shared && !isGone(standing) && standing !== 'suspended' ? await analyzer.store.get(shared.prefix, shared.id) : null;
    // One answer for every failure: a link's holder learns nothing about the key or the analysis.
    if (!shared || !doc) throw new ApiError('analysis_not_found', 'This share link is not valid or has expired. Ask for a new one.');
    return reply
      .type('text/html; charset=utf-8')
      .header('Cache-Control', 'private, no-store')
      .header('X-Robots-Tag', 'noindex')
      .send(sharePage(doc, new Date(shared.expiresMs).toISOString()));
  });

  methodNotAllowed(app, '/v1/analyses', ['GET', 'POST']);
  methodNotAllowed(app, '/v1/analyses/:id', ['GET']);
  methodNotAllowed(app, '/v1/analyses/:id/shipments', ['GET']);
  methodNotAllowed(app, '/v1/analyses/:id/share', ['POST', 'DELETE']);
  methodNotAllowed(app, '/shared/analyses/:token', ['GET']);
}
