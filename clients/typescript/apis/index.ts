export * from './AccountsApi';
export * from './BillingApi';
export * from './ConfigurationApi';
export * from './DashboardApi';
export * from './HelpersApi';
export * from './NewsApi';
export * from './ProviderKeysApi';
