// The panel's stylesheet (in the widget's shadow root, after the launcher's). Every piece of the
// panel is styled here: one sheet, so the part carries each rule once.

/** The panel's place: beside the launcher's anchor; a full-width sheet on narrow screens. */
export function panelCss(anchor: string): string {
  const [v, h] = anchor.split('-');
  const x = h === 'center' ? 'left:50%;transform:translateX(-50%)' : h + ':12px';
  const y = v === 'top' ? 'top:12px' : 'bottom:12px';
  return `.panel,.toast{${x};${y}}`;
}

export const CSS = `.ui,.ui *{box-sizing:border-box}
.ui{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:#1d1d1f;text-align:left;letter-spacing:normal;text-transform:none;-webkit-font-smoothing:antialiased}
.ui button{font:inherit;font-weight:500;cursor:pointer;border-radius:8px;border:1px solid #c4c4cc;background:#fff;color:#1d1d1f;padding:5px 12px;min-height:32px;display:inline-flex;align-items:center;justify-content:center;gap:6px;margin:0;line-height:1.2}
.ui button:hover{background:#f3f3f6}
.ui button:focus-visible,.ui textarea:focus-visible,.ui select:focus-visible,.ui input:focus-visible{outline:3px solid #1a56db;outline-offset:1px}
.ui button:disabled{opacity:.55;cursor:default}
.ui button.primary{background:#1a56db;border-color:#1a56db;color:#fff;font-weight:600;padding:5px 18px}
.ui button.primary:hover{background:#1648b8}
.ui button.icon{padding:0;width:32px;border-color:transparent;background:transparent;color:#3c3c43}
.ui button.icon:hover{background:#ececf0}
.ui button[aria-pressed=true]{background:#1d1d1f;color:#fff;border-color:#1d1d1f}
.i{width:16px;height:16px;fill:none;stroke:currentColor;stroke-width:1.6;stroke-linecap:round;stroke-linejoin:round;flex:none}
.vh{position:absolute!important;width:1px!important;height:1px!important;overflow:hidden!important;clip:rect(0 0 0 0)!important;white-space:nowrap!important;opacity:0;pointer-events:none}
.panel{position:fixed;z-index:2;display:flex;flex-direction:column;width:380px;max-width:calc(100vw - 24px);max-height:calc(100vh - 24px);background:#fff;border:1px solid rgba(0,0,0,.12);border-radius:14px;box-shadow:0 16px 48px rgba(0,0,0,.3);overflow:hidden}
.panel[hidden],.ui [hidden]{display:none!important}
.head{display:flex;align-items:center;gap:10px;padding:10px 8px 10px 14px;border-bottom:1px solid #e6e6eb}
.av{width:34px;height:34px;border-radius:50%;background:#f3f3f6;display:flex;align-items:center;justify-content:center;flex:none}
.av svg{width:28px;height:28px;display:block}
.ht{flex:1;min-width:0;display:flex;flex-direction:column;gap:2px}
.ht h2{margin:0;font-size:16px;font-weight:650;line-height:1.25;color:#1d1d1f}
.ch{display:flex;align-items:center;gap:6px;font-size:12px;color:#4b4b55}
.ch select{font:inherit;font-size:12px;color:#1d1d1f;background:#fff;border:1px solid #c4c4cc;border-radius:6px;padding:2px 4px;max-width:190px;min-height:24px}
.flags{display:flex;gap:4px;flex-wrap:wrap}
.chip{font-size:11px;padding:1px 7px;border-radius:10px;background:#e8edff;color:#1e3a8a}
.body{flex:1 1 auto;overflow:auto;padding:12px 14px;display:flex;flex-direction:column;gap:10px;min-height:0}
.thread h3{margin:0 0 6px;font-size:12px;font-weight:600;color:#4b4b55;text-transform:uppercase;letter-spacing:.04em}
.blocks{list-style:none;margin:0;padding:0;display:flex;flex-direction:column;gap:6px}
.blocks li{display:flex;gap:8px;align-items:center;padding:6px 4px 6px 10px;background:#f5f5f8;border:1px solid #e6e6eb;border-radius:8px;font-size:13px;min-height:40px}
.blocks li .i{color:#4b4b55}
.blocks .thumb{width:48px;height:30px;object-fit:cover;object-position:top left;border-radius:4px;border:1px solid #c4c4cc;flex:none;background:#fff}
.toast{position:fixed;z-index:2;display:flex;align-items:center;gap:10px;max-width:calc(100vw - 24px);padding:8px 16px 8px 8px;background:#1d1d1f;color:#fff;border-radius:12px;box-shadow:0 8px 28px rgba(0,0,0,.3);font-weight:600}
.toast .av{background:#fff}
.blocks .sum{flex:1;min-width:0;display:flex;flex-direction:column}
.blocks .kind{font-weight:600;font-size:12px;color:#1d1d1f}
.blocks .what{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;color:#4b4b55}
.box{border:1px solid #c9d6ff;background:#f4f7ff;border-radius:10px;padding:10px;display:flex;flex-direction:column;gap:6px}
.box .lbl{margin:0;font-size:12px;font-weight:600;color:#1e3a8a}
.box blockquote{margin:0;padding:2px 0 2px 10px;border-left:3px solid #1a56db;color:#1d1d1f;max-height:84px;overflow:auto;white-space:pre-wrap;word-break:break-word}
.box code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;color:#1d1d1f;word-break:break-all}
.row{display:flex;gap:8px;align-items:center;justify-content:flex-end;flex-wrap:wrap}
.ui textarea{display:block;width:100%;min-height:96px;resize:vertical;padding:8px 10px;border:1px solid #b9b9c3;border-radius:8px;font:inherit;color:#1d1d1f;background:#fff;margin:0}
.ui textarea::placeholder{color:#6b6b76;opacity:1}
.box textarea{min-height:56px}
.ui label{font-size:12px;color:#4b4b55}
.count{font-size:12px;color:#4b4b55;text-align:right;margin-top:-6px}
.count.near{color:#b3261e}
.tools{display:flex;gap:6px;flex-wrap:wrap}
.tools button{flex:1 1 auto;font-size:13px;padding:5px 8px}
.rec{display:flex;align-items:center;flex-wrap:wrap;gap:6px 8px;padding:8px 10px;border-radius:10px;background:#fdecea;color:#8c1d18;font-weight:600}
.rec>span{white-space:nowrap}
.rec button{padding:4px 10px;font-size:13px}
.rec .dot{width:10px;height:10px;border-radius:50%;background:#d93025;flex:none}
@media (prefers-reduced-motion:no-preference){.rec .dot{animation:svcpulse 1s ease-in-out infinite alternate}}
@keyframes svcpulse{to{opacity:.3}}
.rec .t{flex:1 0 auto;font-variant-numeric:tabular-nums}
.hint{margin:0;font-size:12px;color:#4b4b55}
.foot{display:flex;align-items:center;gap:8px;padding:10px 14px;border-top:1px solid #e6e6eb;background:#fafafc}
.status{flex:1;margin:0;font-size:12px;color:#1d1d1f;min-height:16px}
.history{list-style:none;margin:0;padding:4px 14px 10px;max-height:min(45vh,360px);overflow:auto;border-top:1px solid #e6e6eb;background:#fafafc}
.history li{padding:7px 0;border-bottom:1px solid #ececf0;display:flex;flex-direction:column;gap:2px}
.history li:last-child{border-bottom:0}
.history .ttl{font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.history .meta{font-size:12px;color:#4b4b55;display:flex;gap:6px;align-items:center;flex-wrap:wrap}
.st{font-size:11px;font-weight:600;padding:0 6px;border-radius:8px}
.st.sent,.st.verified{background:#e6f4ea;color:#1b5e20}.st.queued,.st.fixed{background:#fff4e0;color:#7a4100}.st.failed,.st.news{background:#fdecea;color:#a8231b}.st{background:#ececf0}
.cm{margin:2px 0 0;white-space:pre-wrap;word-break:break-word}
.history .row{justify-content:flex-start}.history .lbl{margin:0;font-weight:600}
.ui input{font:inherit;padding:6px 10px;border:1px solid #b9b9c3;border-radius:8px;width:100%}
.err{margin:0;font-size:12px;color:#a8231b}
.ui button.link{border:0;background:none;padding:0;min-height:0;color:#1a56db;text-decoration:underline}
.drop{position:absolute;inset:0;display:flex;align-items:center;justify-content:center;background:rgba(26,86,219,.92);color:#fff;font-weight:600;font-size:16px;border-radius:14px;pointer-events:none;text-align:center;padding:20px}
@media (max-width:480px){.panel{left:0!important;right:0!important;bottom:0!important;top:auto!important;transform:none!important;width:100%;max-width:none;max-height:92vh;border-radius:14px 14px 0 0}}`;
