import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import type { VolumeRecord } from './contract.js';
import type { RecordChoices } from './schema-form.js';

/**
 * The account's volumes as the choices of a mount's `volume` (the container forms' `mounts`): each
 * by name and size, and one another container mounts shown but not choosable (the API would
 * answer 409). `containerId` is the container the form edits, whose own volumes stay choosable.
 */
export function useVolumeChoices(containerId?: string): RecordChoices {
  const [volumes, setVolumes] = useState<VolumeRecord[]>([]);
  useEffect(() => {
    void api<VolumeRecord[]>('GET', '/api/v1/volumes?limit=1000').then(setVolumes, () => undefined);
  }, [containerId]);
  return {
    'mounts.volume': volumes.map((volume) => {
      const elsewhere = volume.attached_to !== null && volume.attached_to !== containerId;
      return {
        value: volume.id,
        label: `${volume.name} (${volume.size_gb} GB)${elsewhere ? ', mounted by another container' : ''}`,
        disabled: elsewhere,
      };
    }),
  };
}
