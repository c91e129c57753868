import { beforeEach, describe, expect, it } from 'vitest';
import { buildCss, cssEscape, isHashLike, resolve, selectorInfo, structuredEntries, testIdsOf, xpathOf } from '../src/selector';

/** Top-level segments of a css selector (combinators outside brackets and quotes). */
export function segmentsOf(css: string): number {
  let depth = 0;
  let quote = '';
  let count = 1;
  for (let i = 0; i < css.length; i++) {
    const c = css[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '\\') i++;
    else if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') depth--;
    else if (depth === 0 && c === ' ' && css[i + 1] !== '>' && css[i - 1] !== '>') count++;
    else if (depth === 0 && c === '>') count++;
  }
  return count;
}

describe('hash detection', () => {
  it.each([
    'Button_primary__3xZ9a', 'styles-module__title___1bXy2', 'sc-bdVaJa', 'sc-AxjAm', 'css-1x2y3z4', 'css-abc123-Button',
    'emotion-0', 'svelte-1q2w3e', 'jsx-123456', ':r1:', ':R2a:', 'radix-:r3:', 'ember123', 'ext-gen1234', 'mui-42',
    '3f2a9c1e-7b4d-4c2e-9a1f-0e8d7c6b5a43', 'item-3f2a9c1e-7b4d-4c2e-9a1f-0e8d7c6b5a43', 'a1b2c3d4', 'x9Y2z', 'kJhGfD',
    '1column', 'row-1700000000000', 'deadbeef12', '_ngcontent-abc-c12',
  ])('%s is hash-like', (name) => expect(isHashLike(name)).toBe(true));
  it.each([
    'btn', 'btn-primary', 'card__title', 'card--active', 'nav-item', 'col-md-12', 'mt-4', 'isOpen', 'myButtonIcon', 'checkout-form',
    'item123', 'h2', 'css-grid', 'MuiButton-root', 'header', 'v2-header', 'email', 'submit_button', 'page-title', 'todo-list',
  ])('%s is not hash-like', (name) => expect(isHashLike(name)).toBe(false));
});

describe('helpers', () => {
  it('escapes identifiers without CSS.escape', () => {
    expect(cssEscape('a.b')).toBe('a\\.b');
    expect(cssEscape('1a')).toBe('\\31 a');
    expect(cssEscape('w-[100px]')).toBe('w-\\[100px\\]');
    expect(cssEscape('hover:bg')).toBe('hover\\:bg');
  });
  it('parses packed structured values', () => {
    expect(structuredEntries('name=save; el:button, other=1')).toEqual([
      ['name', 'name=save'],
      ['el', 'el:button'],
      ['other', 'other=1'],
    ]);
  });
});

const PAGE = `
<header id="top" class="site-header sc-bdVaJa">
  <nav class="nav css-1x2y3z4"><a href="/" class="nav-item">Home</a><a href="/shop" class="nav-item">Shop</a><a class="nav-item Nav_link__3xZ9a">More</a></nav>
</header>
<main id=":r1:">
  <h1 class="Title_h1__a8Kq2">Checkout</h1>
  <form id="checkout-form" name="checkout">
    <label for="email">Email</label><input id="email" name="email" type="email" placeholder="you@example.com">
    <input name="card" type="text" class="x9Y2z">
    <button type="submit" data-testid="pay">Pay</button>
    <button type="button" data-qa-data="name=cancel; el=button">Cancel</button>
    <button type="button" data-qa-data="el:link">Back</button>
  </form>
  <ul class="items">
    <li class="item"><span class="price">1</span><button class="remove">x</button></li>
    <li class="item"><span class="price">2</span><button class="remove">x</button></li>
    <li class="item"><span class="price">3</span><button class="remove">x</button></li>
  </ul>
  <div id="3f2a9c1e-7b4d-4c2e-9a1f-0e8d7c6b5a43"><div><div><p>deep <b>bold</b> <i>one</i></p><p>deep <b>bold</b></p></div></div></div>
  <section data-cy="reviews"><article><p>Great</p></article><article><p>Bad</p></article></section>
  <img alt="Logo" src="logo.png"><img alt="Logo" src="logo2.png">
  <div class="ember123 card"><div role="button" aria-label="Close dialog">×</div></div>
  <table><tbody><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></tbody></table>
</main>
<footer><p>one</p><p>two</p><p>one</p></footer>
<my-widget id="w1"></my-widget><my-widget></my-widget>`;

describe('selectors on a page', () => {
  beforeEach(() => {
    document.body.innerHTML = PAGE;
    for (const host of Array.from(document.querySelectorAll('my-widget'))) {
      const root = host.attachShadow({ mode: 'open' });
      root.innerHTML = '<div class="box"><button class="act">Go</button><button class="act">Stop</button><span class="sc-AxjAm">z</span></div>';
    }
  });

  const everyElement = (): Element[] => {
    const out: Element[] = [];
    const walk = (root: Document | ShadowRoot) => {
      for (const el of Array.from(root.querySelectorAll('*'))) {
        out.push(el);
        if (el.shadowRoot) walk(el.shadowRoot);
      }
    };
    walk(document);
    return out;
  };

  it('every element resolves back to itself, in at most three segments, without hash-like names', () => {
    const opts = {};
    const elements = everyElement();
    expect(elements.length).toBeGreaterThan(60);
    for (const el of elements) {
      const info = selectorInfo(el, opts);
      expect(resolve(info), `${info.css} for ${el.outerHTML.slice(0, 60)}`).toBe(el);
      expect(segmentsOf(info.css), info.css).toBeLessThanOrEqual(3);
      for (const bad of ['sc-bdVaJa', 'css-1x2y3z4', 'Nav_link__3xZ9a', ':r1:', 'Title_h1__a8Kq2', 'x9Y2z', '3f2a9c1e', 'ember123', 'sc-AxjAm']) {
        expect(info.css.includes(bad) || (info.shadowHosts || []).some((h) => h.includes(bad)), `${info.css} uses ${bad}`).toBe(false);
      }
      const all = (el.getRootNode() as Document).querySelectorAll(info.css);
      if (all.length > 1) expect(info.matchIndex).toBe(Array.prototype.indexOf.call(all, el));
      else expect(info.matchIndex).toBeUndefined();
    }
  });

  it('follows the priority list', () => {
    const q = (css: string) => document.querySelector(css)!;
    expect(buildCss(q('[data-qa-data^="name=cancel"]'), {}).css).toBe('[data-qa-data*="name=cancel"]');
    expect(buildCss(q('[data-qa-data="el:link"]'), {}).css).toBe('[data-qa-data*="el:link"]');
    expect(buildCss(q('[data-testid="pay"]'), {}).css).toBe('[data-testid="pay"]');
    expect(buildCss(q('#email'), {}).css).toBe('#email');
    expect(buildCss(q('[name="card"]'), {}).css).toBe('input[name="card"]');
    expect(buildCss(q('[aria-label="Close dialog"]'), {}).css).toBe('div[aria-label="Close dialog"]');
    expect(buildCss(q('h1'), {}).css).toBe('h1:nth-of-type(1)');
    expect(buildCss(q('.site-header'), {}).css).toBe('#top');
    expect(buildCss(document.querySelectorAll('img')[1], {})).toEqual({ css: 'img:nth-of-type(2)' });
  });

  it('uses ancestors when the element alone is ambiguous', () => {
    const price = document.querySelectorAll('.price')[1];
    const built = buildCss(price, {});
    expect(built.matchIndex).toBeUndefined();
    expect(document.querySelectorAll(built.css)[0]).toBe(price);
  });

  it('says which match with matchIndex when three segments cannot tell', () => {
    const tree = '<div>'.repeat(16) + '<span>x</span>' + '</div>'.repeat(16);
    document.body.innerHTML = tree + tree + tree;
    const span = document.querySelectorAll('span')[2];
    const built = buildCss(span, {});
    expect(segmentsOf(built.css)).toBeLessThanOrEqual(3);
    expect(built.matchIndex).toBe(2);
    expect(document.querySelectorAll(built.css)[2]).toBe(span);
  });

  it('honours testIdAttributes and structuredAttributes', () => {
    document.body.innerHTML = '<div data-qa="panel"><span data-hook="title" data-meta="kind=x; id=main">t</span></div>';
    const span = document.querySelector('span')!;
    expect(buildCss(span, { testIdAttributes: ['data-hook'] }).css).toBe('[data-hook="title"]');
    expect(buildCss(span, { structuredAttributes: [{ attr: 'data-meta', keys: ['id', 'kind'] }] }).css).toBe('[data-meta*="id=main"]');
    expect(testIdsOf(span, { testIdAttributes: ['data-hook', 'data-qa'] })).toEqual(['title', 'panel']);
  });

  it('testIds: the node and up to 10 ancestors, closest first', () => {
    let html = '<span data-testid="leaf">x</span>';
    for (let i = 0; i < 14; i++) html = `<div data-test="a${i}">${html}</div>`;
    document.body.innerHTML = html;
    const ids = testIdsOf(document.querySelector('span')!, {});
    expect(ids).toEqual(['leaf', 'a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8', 'a9']);
  });

  it('xpath is positional from the body', () => {
    const td = document.querySelectorAll('td')[3];
    expect(xpathOf(td)).toBe('/html/body/main/table/tbody/tr[2]/td[2]');
    const result = document.evaluate(xpathOf(td), document, null, 9, null).singleNodeValue;
    expect(result).toBe(td);
  });

  it('shadow roots: shadowHosts from the document down, css relative to the root', () => {
    const host = document.querySelectorAll('my-widget')[1];
    const button = host.shadowRoot!.querySelectorAll('button')[1];
    const info = selectorInfo(button, {});
    expect(info.shadowHosts).toHaveLength(1);
    expect(document.querySelectorAll(info.shadowHosts![0])).toHaveLength(1);
    expect(resolve(info)).toBe(button);
  });

  it('the selector hook is merged over, and a throw or null keeps the built-in result', () => {
    const pay = document.querySelector('[data-testid="pay"]')!;
    expect(selectorInfo(pay, { selector: () => ({ css: '#custom' }) }).css).toBe('#custom');
    expect(selectorInfo(pay, { selector: () => null }).css).toBe('[data-testid="pay"]');
    expect(
      selectorInfo(pay, {
        selector: () => {
          throw new Error('x');
        },
      }).css,
    ).toBe('[data-testid="pay"]');
  });

  it('finds the React component name from the fiber', () => {
    const pay = document.querySelector('[data-testid="pay"]')! as unknown as Record<string, unknown>;
    function PayButton() {}
    pay['__reactFiber$abc'] = { type: 'button', return: { type: PayButton, return: null } };
    expect(selectorInfo(pay as unknown as Element, {}).reactComponent).toBe('PayButton');
  });
});

describe('element text and accessible name', () => {
  beforeEach(() => {
    document.body.innerHTML = `
      <main>
        <button id="pay" data-testid="pay">  Pay
           now </button>
        <button id="icon" aria-label="Close dialog"><svg></svg></button>
        <span id="lbl">Delivery address</span>
        <input id="addr" aria-labelledby="lbl" value="221B Baker Street">
        <label for="email">E-mail</label><input id="email" placeholder="you@example.com" value="ada@example.com">
        <input id="search" placeholder="Search products">
        <input id="submit" type="submit" value="Place order">
        <input id="pw" type="password" aria-label="Password" value="hunter2">
        <textarea id="notes">typed notes</textarea>
        <img id="logo" alt="Shop logo" src="x.png">
        <a id="more" href="/more" title="More offers">See all <b>offers</b></a>
        <div id="card">Card ending <span data-svc-mask>4242</span> expires soon</div>
        <p id="long">${'word '.repeat(80)}</p>
        <div id="plain" title="A hint">Some text</div>
      </main>`;
  });
  const info = (id: string) => selectorInfo(document.getElementById(id) as Element, {});

  it('records what an element shows and what it is called, never a field value', () => {
    expect([info('pay').text, info('pay').accessibleName]).toEqual(['Pay now', 'Pay now']);
    expect([info('icon').text, info('icon').accessibleName]).toEqual([undefined, 'Close dialog']);
    expect([info('addr').text, info('addr').accessibleName]).toEqual([undefined, 'Delivery address']);
    expect([info('email').text, info('email').accessibleName]).toEqual([undefined, 'E-mail']);
    expect([info('search').text, info('search').accessibleName]).toEqual([undefined, 'Search products']);
    expect([info('submit').text, info('submit').accessibleName]).toEqual(['Place order', 'Place order']);
    expect([info('notes').text, info('notes').accessibleName]).toEqual([undefined, undefined]);
    expect([info('logo').text, info('logo').accessibleName]).toEqual([undefined, 'Shop logo']);
    expect([info('more').text, info('more').accessibleName]).toEqual(['See all offers', 'See all offers']);
    expect([info('plain').text, info('plain').accessibleName]).toEqual(['Some text', 'A hint']);
  });

  it('keeps masked text out and cuts long text to 200 characters', () => {
    expect([info('pw').text, info('pw').accessibleName]).toEqual([undefined, undefined]);
    expect(info('card').text).toBe('Card ending expires soon');
    const long = info('long').text as string;
    expect(long.length).toBe(200);
    expect(long.startsWith('word word')).toBe(true);
  });
});
