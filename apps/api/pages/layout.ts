import { escapeHtml } from '../../../lib/html/index.ts';

/** The frame of every HTML page the API serves (trial, renewal, payment answers): one style, no outside assets. */
export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
input,button{font-size:1rem;padding:.5rem}code{background:#f3f3f3;padding:.2rem .4rem;word-break:break-all}
pre{white-space:pre-wrap;word-break:break-all}
.error{color:#a00}</style></head>
<body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}
