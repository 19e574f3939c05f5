import { afterEach, describe, expect, it } from 'vitest';
import { setLanguage } from './src/i18n';
import { formatMoney, formatPercent, formatUnits } from './src/ui/format';

/** Money as every page shows it, in both languages (Intl's own spelling of US dollars in each). */
afterEach(() => setLanguage('en'));

describe('money', () => {
  it('reads cents, or as many digits as make a small amount non-zero, in English', async () => {
    await setLanguage('en');
    expect(formatMoney(0)).toBe('$0.00');
    expect(formatMoney(1234.5)).toBe('$1,234.50');
    expect(formatMoney(0.2)).toBe('$0.20');
    expect(formatMoney(0.0012)).toBe('$0.0012');
    expect(formatMoney(0.005)).toBe('$0.005');
    // A gpt-4o-mini call (a few hundred tokens) costs far below a hundredth of a cent.
    expect(formatMoney(0.0000195)).toBe('< $0.0001');
    expect(formatMoney(0.0001)).toBe('$0.0001');
    expect(formatMoney(-5)).toBe('-$5.00');
    expect(formatMoney(-0.0034)).toBe('-$0.0034');
    expect(formatMoney(-0.00002)).toBe('> -$0.0001');
  });

  it('reads the same way in Chinese, with the dollar named as Chinese readers see it', async () => {
    await setLanguage('zh-CN');
    expect(formatMoney(0)).toBe('US$0.00');
    expect(formatMoney(1234.5)).toBe('US$1,234.50');
    expect(formatMoney(0.0012)).toBe('US$0.0012');
    expect(formatMoney(0.0000195)).toBe('< US$0.0001');
    expect(formatMoney(-5)).toBe('-US$5.00');
    expect(formatMoney(-0.00002)).toBe('> -US$0.0001');
  });

  it('keeps two significant digits on a chart axis, so close ticks differ', async () => {
    await setLanguage('en');
    expect(formatMoney(0.00012, { axis: true })).toBe('$0.00012');
    expect(formatMoney(0.00015, { axis: true })).toBe('$0.00015');
    expect(formatMoney(2.5, { axis: true })).toBe('$2.50');
  });

  it('keeps a unit price\'s decimals (up to six), so $1.875 per 1M tokens does not read $1.88', async () => {
    await setLanguage('en');
    expect(formatMoney(1.875, { price: true })).toBe('$1.875');
    expect(formatMoney(0.075, { price: true })).toBe('$0.075');
    expect(formatMoney(15, { price: true })).toBe('$15.00');
    expect(formatMoney(0.16500000000000004, { price: true })).toBe('$0.165');
    expect(formatMoney(0, { price: true })).toBe('$0.00');
    await setLanguage('zh-CN');
    expect(formatMoney(1.875, { price: true })).toBe('US$1.875');
  });
});

describe('other numbers', () => {
  it('follow the language switch', async () => {
    await setLanguage('en');
    expect(formatUnits({ audio_seconds: 12, calls: 1 })).toBe('12 s of audio, 1 call');
    expect(formatUnits({ images: 2 })).toBe('2 images');
    expect(formatPercent(0)).toBe('0%');
    await setLanguage('zh-CN');
    expect(formatUnits({ audio_seconds: 12, calls: 1 })).toBe('12 秒音频、1 次调用');
    expect(formatUnits({ images: 1 })).toBe('1 张图片');
    expect(formatPercent(12.5)).toBe('12.5%');
  });
});
