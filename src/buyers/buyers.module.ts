import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Buyer } from './buyer.entity';
import { BuyersController } from './buyers.controller';
import { BuyersService } from './buyers.service';
import { VaultModule } from '../vault/vault.module';

@Module({
  imports: [TypeOrmModule.forFeature([Buyer]), VaultModule],
  controllers: [BuyersController],
  providers: [BuyersService],
  exports: [BuyersService],
})
export class BuyersModule {}
