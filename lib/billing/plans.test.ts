import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG_DIR, loadPlans } from '../config/index.ts';
import { paymentProblem, pricePaise, purchasablePlans } from './plans.ts';

const plans = loadPlans(DEFAULT_CONFIG_DIR);
const paid = { amount_paise: 99_900, currency: 'INR', status: 'captured', plan: 'growth' as const };

describe('plans for sale', () => {
  it('sells every plan with a price, never the trial', () => {
    expect(purchasablePlans(plans)).toEqual(['starter', 'growth', 'business']);
    expect(pricePaise('business', plans)).toBe(300_000);
  });

  it("applies only the plan's exact price in INR, captured", () => {
    expect(paymentProblem(paid, plans)).toBeNull();
    expect(paymentProblem({ ...paid, amount_paise: 99_800 }, plans)).toBe('amount_mismatch');
    expect(paymentProblem({ ...paid, amount_paise: 100_000 }, plans)).toBe('amount_mismatch');
    expect(paymentProblem({ ...paid, currency: 'USD' }, plans)).toBe('currency_mismatch');
    expect(paymentProblem({ ...paid, status: 'authorized' }, plans)).toBe('not_captured');
    expect(paymentProblem({ ...paid, plan: 'trial' }, plans)).toBe('unknown_plan');
    expect(paymentProblem({ ...paid, plan: null }, plans)).toBe('unknown_plan');
  });
});
