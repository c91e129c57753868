// SVG sources are imported as their (minified) text by build.mjs's svg plugin.
declare module '*.svg' {
  const text: string;
  export default text;
}
