import { z } from 'zod';
import {
  AnalysisAcceptedSchema, AnalysisListSchema, AnalysisRequestSchema, AnalysisSchema, AnalyzerUsageSchema, ReportSchema,
  SHIPMENT_CSV_COLUMNS, ShareLinkSchema,
} from '../../lib/analyzer/index.ts';

/**
 * OpenAPI of the shipment analyzer (contracts.md "Shipment analyzer"), merged into openapi.ts's
 * document; every shape is generated from lib/analyzer/schemas.ts, which the routes answer.
 */
const json = (schema: z.ZodType) => z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'any', io: 'output' });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ref('ErrorBody') } } });
const jsonResponse = (description: string, name: string) => ({ description, content: { 'application/json': { schema: ref(name) } } });
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^an_' } };
const tags = ['Shipment analyzer'];
const keyErrors = {
  401: errorResponse('missing_api_key or invalid_api_key'), 402: errorResponse('payment_required (past the period)'),
  403: errorResponse('plan_feature_unavailable: growth and business plans only'), 429: errorResponse('rate_limit_exceeded (burst)'),
};

export const ANALYSIS_SCHEMAS = {
  AnalysisRequest: json(AnalysisRequestSchema),
  AnalysisAccepted: json(AnalysisAcceptedSchema),
  Analysis: json(AnalysisSchema),
  AnalysisList: json(AnalysisListSchema),
  AnalysisReport: json(ReportSchema),
  ShareLink: json(ShareLinkSchema),
  AnalyzerUsage: json(AnalyzerUsageSchema),
};

const CSV_EXAMPLE = 'awb,carrier,order_id,payment_mode,promised_by\n1234567890104,delhivery,ORD-1,cod,2026-11-28\n12345670104,bluedart,ORD-2,prepaid,\n';

export function analysisPaths(): Record<string, unknown> {
  return {
    '/v1/analyses': {
      post: {
        tags, summary: 'Analyse your shipments (growth and business plans)', operationId: 'createAnalysis',
        description: 'JSON, or `Content-Type: text/csv` with a header row naming the same columns (awb required; any order; UTF-8 with or without BOM; comma or semicolon; quoted fields; `?name=` names it). 1 to 20,000 rows. Each distinct carrier + AWB counts once against the analyzer allowance of the period (growth 4,000, business 12,000), atomically when accepted; carrier errors are given back when it completes. No lookup is consumed and the daily quota does not apply. Bad rows are listed in `rejected_rows` and count nothing.',
        parameters: [{ name: 'name', in: 'query', schema: { type: 'string', maxLength: 200 }, description: 'Name of a CSV analysis' }],
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: ref('AnalysisRequest'), example: { name: 'November', shipments: [{ awb: '1234567890104', carrier: 'delhivery', payment_mode: 'cod', promised_by: '2026-11-28' }] } },
            'text/csv': { schema: { type: 'string' }, example: CSV_EXAMPLE },
          },
        },
        responses: {
          202: { ...jsonResponse('Accepted and queued; `Location` names it', 'AnalysisAccepted'), headers: { Location: { schema: { type: 'string' } } } },
          400: errorResponse('invalid_analysis: no valid row, or a CSV without an awb column'),
          413: errorResponse('payload_too_large: over 20,000 rows'),
          ...keyErrors,
          429: errorResponse('analyzer_quota_exceeded (no Retry-After; the message says how many it needs and how many remain) or rate_limit_exceeded'),
        },
      },
      get: {
        tags, summary: 'The key\'s analyses, newest first (cursor-paged)', operationId: 'listAnalyses',
        parameters: [{ name: 'cursor', in: 'query', schema: { type: 'string' } }, { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } }],
        responses: { 200: jsonResponse('Analyses without their reports', 'AnalysisList'), ...keyErrors },
      },
    },
    '/v1/analyses/{id}': {
      parameters: [idParam],
      get: {
        tags, summary: 'One analysis: status, progress and (once completed) the report', operationId: 'getAnalysis',
        responses: { 200: jsonResponse('The analysis', 'Analysis'), 404: errorResponse('analysis_not_found (also for another key\'s analysis)'), ...keyErrors },
      },
    },
    '/v1/analyses/{id}/shipments': {
      parameters: [idParam],
      get: {
        tags, summary: 'One CSV row per shipment of a completed analysis', operationId: 'getAnalysisShipments',
        responses: {
          200: { description: `text/csv with the columns ${SHIPMENT_CSV_COLUMNS.join(', ')} (ndr_reasons ;-separated)`, content: { 'text/csv': { schema: { type: 'string' } } } },
          404: errorResponse('analysis_not_found'), 409: errorResponse('conflict: not completed yet'), ...keyErrors,
        },
      },
    },
    '/v1/analyses/{id}/share': {
      parameters: [idParam],
      post: {
        tags, summary: 'A signed link (30 days) to an HTML report with charts, for colleagues without API access', operationId: 'shareAnalysis',
        responses: { 200: jsonResponse('The link', 'ShareLink'), 404: errorResponse('analysis_not_found'), ...keyErrors },
      },
    },
    '/shared/analyses/{token}': {
      get: {
        tags, summary: 'The shared report page (no API key: the signed token is the permission)', operationId: 'sharedAnalysisPage', security: [],
        parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { 200: { description: 'HTML with server-rendered SVG charts; nothing loaded from another host', content: { 'text/html': { schema: { type: 'string' } } } }, 404: errorResponse('analysis_not_found: invalid or expired link') },
      },
    },
  };
}
