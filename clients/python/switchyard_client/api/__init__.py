from __future__ import absolute_import

# flake8: noqa

# import apis into api package
from switchyard_client.api.accounts_api import AccountsApi
from switchyard_client.api.billing_api import BillingApi
from switchyard_client.api.configuration_api import ConfigurationApi
from switchyard_client.api.dashboard_api import DashboardApi
from switchyard_client.api.helpers_api import HelpersApi
from switchyard_client.api.news_api import NewsApi
from switchyard_client.api.provider_keys_api import ProviderKeysApi
