import { describe, expect, it } from 'vitest';
import { contactProblem, maskEmail, maskPhone, normalizeEmail, normalizePhone, usableChannels } from './contact.ts';

describe('a customer contact', () => {
  it('reads Indian mobile numbers however they are written, and nothing else', () => {
    for (const written of ['+919876543210', '919876543210', '09876543210', '9876543210', '+91 98765-43210', '(+91) 98765 43210']) {
      expect(normalizePhone(written)).toBe('+919876543210');
    }
    for (const bad of ['12345', '+15551234567', '5876543210', '+91987654321', '+9198765432100', 'phone']) expect(normalizePhone(bad)).toBeNull();
  });

  it('checks e-mail addresses plainly and lower-cases only the domain', () => {
    expect(normalizeEmail(' Ravi.K@Example.COM ')).toBe('Ravi.K@example.com');
    for (const bad of ['ravi', 'ravi@', '@example.com', 'ravi@example', 'ra vi@example.com', 'a@b@example.com']) expect(normalizeEmail(bad)).toBeNull();
  });

  it('masks: the country code and four digits, the first letter and the domain', () => {
    expect(maskPhone('+919876541234')).toBe('+91******1234');
    expect(maskEmail('ravi@example.com')).toBe('r***@example.com');
  });

  it('says what is missing for the channels asked', () => {
    expect(contactProblem([], { phone: '+919876543210', email: null })).toMatch(/at least one/);
    expect(contactProblem(['sms', 'sms'], { phone: '+919876543210', email: null })).toMatch(/twice/);
    expect(contactProblem(['whatsapp'], { phone: null, email: 'a@example.com' })).toMatch(/customer.phone/);
    expect(contactProblem(['sms', 'email'], { phone: '+919876543210', email: null })).toMatch(/customer.email/);
    expect(contactProblem(['whatsapp', 'sms', 'email'], { phone: '+919876543210', email: 'a@example.com' })).toBeNull();
    expect(usableChannels(['whatsapp', 'email'], { phone: null, email: 'a@example.com' })).toEqual(['email']);
  });
});
