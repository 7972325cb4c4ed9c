/**
 * Test support: every answer the app sends in a test, checked against the generated OpenAPI
 * documents (status declared, required headers present and well-formed, JSON body valid), so the
 * documents cannot drift from what the code answers. The harness (harness.ts) records the answers
 * of every API test suite and fails the suite on a mismatch when it closes.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { openApiPath } from '../openapi/document.ts';

/** One answer as the app sent it. */
export interface RecordedAnswer {
  method: string;
  /** The route's Fastify URL (`:param`); undefined when no route matched (404). */
  route: string | undefined;
  url: string;
  status: number;
  headers: Record<string, unknown>;
  body: string | null;
}

/** Records every answer `buildApp`'s `onAnswer` sees (string payloads are JSON or text). */
export function answerRecorder(): { answers: RecordedAnswer[]; onAnswer: (request: FastifyRequest, reply: FastifyReply, payload: unknown) => void } {
  const answers: RecordedAnswer[] = [];
  return {
    answers,
    onAnswer(request, reply, payload) {
      answers.push({
        method: request.method,
        route: request.routeOptions.url,
        url: request.url,
        status: reply.statusCode,
        headers: { ...reply.getHeaders() },
        body: typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null,
      });
    },
  };
}

interface HeaderObject { required?: boolean; schema?: { type?: string; enum?: string[] } }
interface ResponseObject { headers?: Record<string, HeaderObject>; content?: Record<string, unknown> }
interface Json { paths?: Record<string, Record<string, { responses: Record<string, ResponseObject> } | undefined> | undefined> }

/** A checker of answers against OpenAPI 3.1 documents (their schemas compiled once). */
export class ContractChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly documents: { id: string; document: Json }[] = [];

  constructor(documents: object[]) {
    (addFormats as unknown as (ajv: Ajv2020) => void)(this.ajv);
    documents.forEach((document, i) => {
      const id = `doc${i}`;
      this.ajv.addSchema(document, id);
      this.documents.push({ id, document: document as Json });
    });
  }

  /** The mismatches of one answer; none for an answer of no described operation (405, 404, /docs). */
  check(answer: RecordedAnswer): string[] {
    if (answer.route === undefined || answer.method === 'HEAD') return [];
    const path = openApiPath(answer.route);
    const method = answer.method.toLowerCase();
    const found = this.documents.find(({ document }) => document.paths?.[path]?.[method]);
    if (!found) return [];
    const where = `${answer.method} ${answer.url} → ${answer.status}`;
    const operation = found.document.paths![path]![method]!;
    const response = operation.responses[String(answer.status)];
    if (!response) return [`${where}: status ${answer.status} is not declared (declared: ${Object.keys(operation.responses).join(', ')}); body ${answer.body?.slice(0, 200)}`];

    const problems: string[] = [];
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const value = answer.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required) problems.push(`${where}: required header ${name} missing`);
        continue;
      }
      const text = String(value);
      if (header.schema?.type === 'integer' && !/^\d+$/.test(text)) problems.push(`${where}: header ${name} is ${JSON.stringify(text)}, not an integer`);
      if (header.schema?.enum && !header.schema.enum.includes(text)) problems.push(`${where}: header ${name} is ${JSON.stringify(text)}, not one of ${header.schema.enum.join(', ')}`);
    }

    const body = answer.body ?? '';
    const contentType = String(answer.headers['content-type'] ?? '').split(';')[0]!.trim();
    const declared = Object.keys(response.content ?? {});
    if (declared.length === 0) {
      if (body !== '') problems.push(`${where}: a body was sent where none is declared`);
      return problems;
    }
    // A text answer (CSV, HTML) is checked for its type only.
    if (!declared.includes('application/json')) {
      if (!declared.includes(contentType)) problems.push(`${where}: content-type ${contentType}, declared ${declared.join(', ')}`);
      return problems;
    }
    if (!/^application\/json/.test(String(answer.headers['content-type'] ?? ''))) problems.push(`${where}: content-type ${String(answer.headers['content-type'])}, not JSON`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return [...problems, `${where}: the body is not JSON: ${body.slice(0, 200)}`];
    }
    const pointer = `${found.id}#/paths/${escapePointer(path)}/${method}/responses/${answer.status}/content/application~1json/schema`;
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: pointer });
      this.validators.set(pointer, validate);
    }
    if (!validate(parsed)) {
      problems.push(`${where}: body does not match the schema: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}; body ${body.slice(0, 300)}`);
    }
    return problems;
  }

  checkAll(answers: RecordedAnswer[]): string[] {
    return answers.flatMap((answer) => this.check(answer));
  }
}

function escapePointer(segment: string): string {
  return encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1'));
}
