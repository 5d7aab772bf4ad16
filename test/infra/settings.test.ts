import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ContainerWorkload } from '../../infra/constructs/container-workload.js';
import { readSettings } from '../../infra/settings.js';
import { propertiesOfOnly, resourcesOfType } from './template-queries.js';

const certificateArn = 'arn:aws:acm:us-east-1:111122223333:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789';
const settingsFrom = (context: Record<string, unknown>) => readSettings(new App({ context }).node);
const withDomains = (apiDomain: string, appsDomain: string) =>
  settingsFrom({ apiDomain, apiCertificateArn: certificateArn, appsDomain, appsCertificateArn: certificateArn });

describe('deployment settings: apps and API on different sites', () => {
  it.each([
    ['api.example.com', 'apps.example.com'],
    ['example.com', 'apps.example.com'],
    ['api.shop.co.uk', 'apps.shop.co.uk'],
    ['api.team.github.io', 'apps.team.github.io'],
  ])('refuses apiDomain %s with appsDomain %s: the same registrable domain, so same-site for cookies', (apiDomain, appsDomain) => {
    // Act / Assess
    expect(() => withDomains(apiDomain, appsDomain)).toThrow(/appsDomain must be a different registrable domain/);
  });

  it.each([
    ['api.example.com', 'apps.example.net'],
    ['api.shop.co.uk', 'apps.other.co.uk'],
    // github.io is a public suffix in the list's private section: each account's pages are a site.
    ['api.github.io', 'apps.github.io'],
  ])('accepts apiDomain %s with appsDomain %s', (apiDomain, appsDomain) => {
    // Act / Assess
    expect(withDomains(apiDomain, appsDomain).appsDomain).toBe(appsDomain);
  });

  it('compares with publicBaseUrl when it names the issuer', () => {
    // Act / Assess
    expect(() =>
      settingsFrom({ publicBaseUrl: 'https://login.example.com', appsDomain: 'apps.example.com', appsCertificateArn: certificateArn }),
    ).toThrow(/different registrable domain/);
  });
});

describe('deployment settings: network and architecture', () => {
  it('defaults to one NAT gateway, the load balancer idle timeout 120 s and x86_64 containers', () => {
    // Act
    const settings = settingsFrom({});
    // Assess
    expect([settings.natGateways, settings.appsIdleTimeoutSeconds, settings.containerCpuArchitecture]).toEqual([1, 120, 'X86_64']);
  });

  it('takes natGateways 2, an idle timeout and arm64 (in any case), and refuses what AWS does not offer', () => {
    // Act
    const settings = settingsFrom({ natGateways: '2', appsIdleTimeoutSeconds: '3600', containerCpuArchitecture: 'arm64' });
    // Assess
    expect([settings.natGateways, settings.appsIdleTimeoutSeconds, settings.containerCpuArchitecture]).toEqual([2, 3600, 'ARM64']);
    expect(() => settingsFrom({ natGateways: 3 })).toThrow(/natGateways/);
    expect(() => settingsFrom({ appsIdleTimeoutSeconds: 4001 })).toThrow(/appsIdleTimeoutSeconds/);
    expect(() => settingsFrom({ containerCpuArchitecture: 'riscv' })).toThrow(/containerCpuArchitecture/);
  });

  it.each([
    [1, 'X86_64'],
    [2, 'ARM64'],
  ] as const)('builds %i NAT gateway(s) and tells the functions to register %s task definitions', (natGateways, cpuArchitecture) => {
    // Prepare
    const stack = new Stack(new App(), 'WorkloadSettings');
    // Act
    const workload = new ContainerWorkload(stack, 'Containers', { image: 'nginx', taskFamily: 'family', natGateways, cpuArchitecture });
    // Assess
    const template = Template.fromStack(stack);
    expect(resourcesOfType(template, 'AWS::EC2::NatGateway')).toHaveLength(natGateways);
    expect(propertiesOfOnly(template, 'AWS::ECS::TaskDefinition').RuntimePlatform).toEqual({
      CpuArchitecture: cpuArchitecture,
      OperatingSystemFamily: 'LINUX',
    });
    expect(workload.functionEnvironment.ECS_CPU_ARCHITECTURE).toBe(cpuArchitecture);
  });
});
