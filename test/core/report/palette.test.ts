import { expect } from 'chai';
import {
  cielab,
  contrastRatio,
  deltaE,
  markerSvg,
  MARKER_SHAPES,
  PALETTE,
  paletteColor,
  relativeLuminance,
  seriesStyle,
  tint,
} from '../../../core/report/palette';

describe('core/report/palette (series styles of the report)', () => {
  it('relativeLuminance, contrastRatio, cielab and tint against hand-computed values', () => {
    // #0072B2: G 114/255 → ((0.44706 + 0.055) / 1.055)^2.4 = 0.16829, B 178/255 → 0.44518;
    // 0.7152·0.16829 + 0.0722·0.44518 = 0.15249
    expect(relativeLuminance('#0072B2')).to.be.closeTo(0.15249, 1e-5);
    expect(relativeLuminance('#ffffff')).to.equal(1);
    expect(contrastRatio('#000000', '#FFFFFF')).to.equal(21); // (1 + 0.05) / (0 + 0.05)
    expect(contrastRatio('#0072B2', '#ffffff')).to.be.closeTo(1.05 / 0.20249, 1e-4);
    // mid grey: Y = ((128/255 + 0.055)/1.055)^2.4 = 0.21586, L* = 116·Y^(1/3) − 16 = 53.585, a* = b* = 0
    const [l, a, b] = cielab('#808080');
    expect(l).to.be.closeTo(53.585, 1e-3);
    expect(Math.abs(a) + Math.abs(b)).to.be.below(0.01);
    expect(deltaE('#808080', '#808080')).to.equal(0);
    // 0.16 of #0072B2 over white: 255 − 255·0.16 = 214.2, 255 − 141·0.16 = 232.44, 255 − 77·0.16 = 242.68
    expect(tint('#0072B2', 0.16)).to.equal('#d6e8f3');
    expect(tint('#123456', 1)).to.equal('#123456');
    expect(() => relativeLuminance('blue')).to.throw(RangeError);
  });

  it('twelve colours: each at least 2:1 against the white page, every pair at least 15 apart (ΔE*76)', () => {
    expect(new Set(PALETTE.map((c) => c.toLowerCase())).size).to.equal(12);
    for (const c of PALETTE) expect(contrastRatio(c, '#ffffff'), c).to.be.at.least(2);
    for (let i = 0; i < 12; i++)
      for (let j = i + 1; j < 12; j++)
        expect(deltaE(PALETTE[i]!, PALETTE[j]!), `${PALETTE[i]} / ${PALETTE[j]}`).to.be.at.least(15);
  });

  it('the first twelve series have twelve colours and twelve markers, so greyscale keeps them apart', () => {
    const styles = Array.from({ length: 12 }, (_, i) => seriesStyle(i));
    expect(new Set(styles.map((s) => s.color)).size).to.equal(12);
    expect(new Set(styles.map((s) => `${s.marker}/${s.hollow}`)).size).to.equal(12);
    // in greyscale a pair is told apart by its lightness or, failing that, by its marker
    let lighterPairs = 0;
    for (let i = 0; i < 12; i++)
      for (let j = i + 1; j < 12; j++) {
        const [a, b] = [styles[i]!, styles[j]!];
        const lighter = Math.abs(cielab(a.color)[0] - cielab(b.color)[0]) >= 10;
        const marked = a.marker !== b.marker || a.hollow !== b.hollow;
        expect(lighter || marked, `${i} / ${j}`).to.equal(true);
        if (lighter) lighterPairs++;
      }
    // L* of the twelve: 46.0 54.2 57.7 61.0 70.6 69.8 0.0 31.9 43.6 63.6 61.5 22.4; 46 of the 66 pairs
    // are 10 or more apart, the other 20 differ in marker shape or fill
    expect(lighterPairs).to.equal(46);
    // the pairs that share a shape (filled and hollow) and are closest in lightness: 3 / 9 (L* 61.0, 63.6)
    // and 4 / 10 (70.6, 61.5); their fill still differs
    expect([styles[3]!.marker, styles[3]!.hollow, styles[9]!.marker, styles[9]!.hollow]).to.deep.equal([
      'diamond',
      false,
      'diamond',
      true,
    ]);
    expect(styles.slice(0, 6).every((s) => !s.hollow) && styles.slice(6).every((s) => s.hollow)).to.equal(true);
  });

  it('past twelve the marker cycle shifts, so no two of the first 144 series look alike', () => {
    const keys = Array.from({ length: 144 }, (_, i) => seriesStyle(i)).map((s) => `${s.color} ${s.marker} ${s.hollow}`);
    expect(new Set(keys).size).to.equal(144);
    // series 12 takes colour 0 again with the marker of series 1 (a filled square)
    expect(seriesStyle(12)).to.deep.equal({ color: PALETTE[0], marker: 'square', hollow: false });
    expect(paletteColor(13)).to.equal(PALETTE[1]);
    expect(() => seriesStyle(-1)).to.throw(RangeError);
    expect(() => seriesStyle(1.5)).to.throw(RangeError);
  });

  it('markerSvg: one element per shape, hollow ones white inside', () => {
    const drawn = MARKER_SHAPES.map((marker) => markerSvg({ color: '#0072B2', marker, hollow: false }, 10, 20, 3));
    expect(drawn[0]).to.equal(
      '<circle cx="10.0" cy="20.0" r="3.0" fill="#0072B2" stroke="#0072B2" stroke-width="1.2"/>',
    );
    // square: side 1.7·r = 5.1 centred on (10, 20), corner (7.45, 17.45); in binary 7.45 is a hair
    // above and 17.45 a hair below, so toFixed(1) gives 7.5 and 17.4
    expect(drawn[1]).to.contain('<rect x="7.5" y="17.4" width="5.1" height="5.1"');
    // triangle up: apex at y − 1.15·r = 16.55; down: at y + 1.15·r = 23.45
    expect(drawn[2]).to.match(/^<polygon points="10\.0,16\.6 /);
    expect(drawn[4]).to.match(/^<polygon points="10\.0,23\.4 /);
    expect(new Set(drawn).size).to.equal(6);
    expect(markerSvg({ color: '#0072B2', marker: 'diamond', hollow: true }, 0, 0, 2)).to.contain(
      'fill="#ffffff" stroke="#0072B2"',
    );
  });
});
