/**
 * Realistic model outputs, one per format, built from the same parts so the formats compare
 * fairly: a short preamble, a `python` call whose `code` argument is a 77-line script (≈ 2.6 KiB,
 * non-ASCII included), a parallel `get_weather` call with non-string, empty and unicode values,
 * and a closing sentence where the format allows text after its calls.
 */

export const PREAMBLE = "I'll load the readings, clean them and plot the weekly trend — then check the forecast for São Paulo.\n\n";
export const CLOSING = '\n\nOnce both results are back I will summarise them (in °C, as you asked).';

/** The script the `python` call carries: what a model writes for a small data task. */
export const PYTHON_CODE = `import csv
import json
import math
import statistics
from collections import defaultdict
from datetime import datetime, timedelta

# Readings from the station in São Paulo — température en °C, humidité en %
RAW = """date,temp_c,humidity,station
2024-06-01,18.4,71,São Paulo – Centro
2024-06-02,17.9,74,São Paulo – Centro
2024-06-03,19.2,68,São Paulo – Centro
2024-06-04,21.0,63,São Paulo – Centro
2024-06-05,20.3,65,São Paulo – Centro
2024-06-06,16.8,80,São Paulo – Centro
2024-06-07,15.1,84,São Paulo – Centro
"""


def parse_rows(text):
    rows = []
    for row in csv.DictReader(text.strip().splitlines()):
        row["date"] = datetime.strptime(row["date"], "%Y-%m-%d")
        row["temp_c"] = float(row["temp_c"])
        row["humidity"] = int(row["humidity"])
        rows.append(row)
    return rows


def dew_point(t, rh):
    # Magnus formula; good to ±0.35 °C for -45 °C < t < 60 °C
    a, b = 17.62, 243.12
    gamma = math.log(rh / 100.0) + a * t / (b + t)
    return b * gamma / (a - gamma)


def weekly(rows):
    weeks = defaultdict(list)
    for r in rows:
        monday = r["date"] - timedelta(days=r["date"].weekday())
        weeks[monday.date().isoformat()].append(r["temp_c"])
    return {k: round(statistics.mean(v), 2) for k, v in sorted(weeks.items())}


def sparkline(values, width=24):
    """Unicode bar chart, one block per value: ▁▂▃▄▅▆▇█"""
    blocks = "▁▂▃▄▅▆▇█"
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    step = max(1, len(values) // width)
    return "".join(blocks[int((v - lo) / span * (len(blocks) - 1))] for v in values[::step])


def flag_outliers(rows, z=1.5):
    temps = [r["temp_c"] for r in rows]
    mu, sigma = statistics.mean(temps), statistics.pstdev(temps) or 1.0
    return [r["date"].strftime("%Y-%m-%d") for r in rows if abs(r["temp_c"] - mu) / sigma > z]


rows = parse_rows(RAW)
for r in rows:
    r["dew_point"] = round(dew_point(r["temp_c"], r["humidity"]), 1)
    r["comfort"] = "humide 💧" if r["dew_point"] > 13 else "sec"

print("trend:", sparkline([r["temp_c"] for r in rows]))
print("outliers:", flag_outliers(rows) or "none")

summary = {
    "n": len(rows),
    "mean_c": round(statistics.mean(r["temp_c"] for r in rows), 2),
    "stdev_c": round(statistics.stdev(r["temp_c"] for r in rows), 2),
    "coldest": min(rows, key=lambda r: r["temp_c"])["date"].strftime("%d/%m"),
    "weekly": weekly(rows),
    "note": "données brutes ✓ — 数据已清洗 🌡️",
}
print(json.dumps(summary, ensure_ascii=False, indent=2))
print("\\t".join(f'{r["date"]:%a} {r["temp_c"]:>5.1f}°C' for r in rows))
`;

export const PYTHON_ARGS = { code: PYTHON_CODE };
export const WEATHER_ARGS = { city: 'São Paulo', country: 'BR', unit: 'celsius', days: 3, hourly: false, alerts: null, extra: {}, fields: ['temp', 'rain', 'wind'], label: '天气 ☀️' };

export interface BenchCall {
  name: string;
  args: Record<string, unknown>;
}

export const CALLS: readonly BenchCall[] = [
  { name: 'python', args: PYTHON_ARGS },
  { name: 'get_weather', args: WEATHER_ARGS },
];

/**
 * JSON as models write it in chat templates: `", "` between items and `": "` after keys, on one
 * line (what `json.dumps` gives, and what Hermes, Mistral and Llama templates show the model).
 */
export function modelJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(modelJson).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${modelJson(v)}`).join(', ')}}`;
  }
  return JSON.stringify(value);
}

/** A Python literal for a JSON value (pythonic calls, plan steps). */
export function pythonLiteral(value: unknown): string {
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (Array.isArray(value)) return `[${value.map(pythonLiteral).join(', ')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${pythonLiteral(v)}`).join(', ')}}`;
  }
  // A JSON string literal is a valid Python one for this text (\n, \t, \", \\ and raw non-ASCII).
  return JSON.stringify(value);
}
