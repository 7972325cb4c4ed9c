/**
 * Couriers write the delivery agent into the out-for-delivery text: Xpressbees (also relayed by
 * Shiprocket) sends "Out for delivery: 383439-<agent name> <agency> (356231)…, MobileNo:- <mobile>".
 * The shared redaction finds the number but cannot know a bare name is one, so the adapters that
 * carry this layout cut everything after the label: nothing in it is the product's business.
 */
import { REDACTED } from '../../redact/index.ts';

const AGENT_DETAIL = /(out\s*for\s*delivery)\s*:\s*\S.*$/is;

/** The text with any agent detail after "Out for delivery:" replaced by the redaction mark. */
export function withoutAgentDetail(text: string): string {
  return AGENT_DETAIL.test(text) ? text.replace(AGENT_DETAIL, `$1: ${REDACTED}`) : text;
}
