import type { PriceAreaCode } from './spot-prices.js';

/** A grid neighbourhood pre-screened as eligible: a polygon and/or a list of meter point ids. */
export interface Neighbourhood {
  id: string;
  name: string;
  /** The price area of the neighbourhood's price curves. */
  priceArea: PriceAreaCode;
  /** Closed or open ring of vertices (the last vertex connects to the first). May be empty. */
  polygon: { latitude: number; longitude: number }[];
  meterPointIds: string[];
}

/**
 * The two default sandbox test areas on Svalbard. The service publishes its own polygons (not
 * captured in our research); these are ours. The OpenAPI example point (78.22094, 15.61946)
 * lies inside "Longyearbyen sentrum".
 */
export const defaultNeighbourhoods: readonly Neighbourhood[] = [
  {
    id: 'test-area-1',
    name: 'Longyearbyen sentrum (test area 1)',
    priceArea: 'NO4',
    polygon: [
      { latitude: 78.205, longitude: 15.56 },
      { latitude: 78.205, longitude: 15.68 },
      { latitude: 78.23, longitude: 15.7 },
      { latitude: 78.235, longitude: 15.6 },
      { latitude: 78.22, longitude: 15.54 },
    ],
    meterPointIds: ['707057500000000001', '707057500000000002', '707057500000000003'],
  },
  {
    id: 'test-area-2',
    name: 'Adventdalen, Svalbard (test area 2)',
    priceArea: 'NO4',
    polygon: [
      { latitude: 78.17, longitude: 15.75 },
      { latitude: 78.17, longitude: 16.05 },
      { latitude: 78.2, longitude: 16.05 },
      { latitude: 78.2, longitude: 15.75 },
    ],
    meterPointIds: ['707057500000000000', '707057500000000011', '707057500000000012'],
  },
];

/** Ray casting; points on an edge may fall either way. */
export function pointInPolygon(lat: number, lon: number, polygon: Neighbourhood['polygon']): boolean {
  let inside = false;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const a = polygon[i];
    const b = polygon[j];
    if (!a || !b) continue;
    const crosses = a.latitude > lat !== b.latitude > lat;
    if (crosses && lon < ((b.longitude - a.longitude) * (lat - a.latitude)) / (b.latitude - a.latitude) + a.longitude) {
      inside = !inside;
    }
  }
  return inside;
}

export interface LocatedThing {
  meterPointIds: string[];
  coordinates?: { latitude: number; longitude: number } | undefined;
}

/** The first neighbourhood containing the location by meter point id, else by coordinates. */
export function neighbourhoodOf(location: LocatedThing, areas: readonly Neighbourhood[]): Neighbourhood | undefined {
  for (const area of areas) {
    if (location.meterPointIds.some((m) => area.meterPointIds.includes(m))) return area;
  }
  const c = location.coordinates;
  if (!c) return undefined;
  return areas.find((area) => area.polygon.length >= 3 && pointInPolygon(c.latitude, c.longitude, area.polygon));
}

export function meterPointEligible(mpid: string, areas: readonly Neighbourhood[]): boolean {
  return areas.some((a) => a.meterPointIds.includes(mpid));
}
